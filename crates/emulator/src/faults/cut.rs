//! Cutting connections and bodies: a reset of the connection being served, and a response body
//! that is cut halfway (an event stream's frame, a download's bytes).

use std::net::Shutdown;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use super::{Injector, Target};
use crate::Body;
use latlab_core::faults::Effect;

/// A handle on one connection's socket that can reset it: `SO_LINGER` 0 and a shutdown, so the
/// client sees its connection die (a reset once the server lets go of it). It holds the socket's
/// descriptor number, not the socket: it is used only while the connection is served (from its
/// request handler or its response body), when the descriptor is the connection's own.
pub struct ConnReset(Option<std::os::fd::RawFd>);

impl ConnReset {
    pub fn of(socket: &tokio::net::TcpStream) -> ConnReset {
        use std::os::fd::AsRawFd;
        ConnReset(Some(socket.as_raw_fd()))
    }

    pub fn reset(&self) {
        if let Some(fd) = self.0 {
            // SAFETY: the descriptor belongs to the connection being served while this is called
            // (see the type's comment), so it is open and is that connection's socket.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            let s = socket2::SockRef::from(&fd);
            let _ = s.set_linger(Some(Duration::ZERO));
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// How a cut body ends: passing frames, then (after the cut) waiting a moment so the half frame
/// is on the wire, then resetting the connection.
enum CutState {
    Passing,
    Cutting(Pin<Box<tokio::time::Sleep>>),
    Done,
}

/// A response body that may be cut: an event stream (a fault decided per frame) or a download
/// (cut after `cut_after` bytes).
pub struct Faulty {
    inner: Body,
    state: CutState,
    conn: Arc<ConnReset>,
    mode: Mode,
}

enum Mode {
    /// An event stream: frames after the first (the initial response) may be cut or end it.
    Stream {
        injector: Arc<Injector>,
        target: Target,
        seen: u64,
    },
    /// A download cut after this many more bytes.
    Bytes { left: u64 },
}

impl Faulty {
    pub fn stream(
        inner: Body,
        injector: Arc<Injector>,
        target: Target,
        conn: Arc<ConnReset>,
    ) -> Body {
        use http_body_util::BodyExt;
        Faulty {
            inner,
            state: CutState::Passing,
            conn,
            mode: Mode::Stream {
                injector,
                target,
                seen: 0,
            },
        }
        .boxed()
    }

    pub fn cut_after(inner: Body, bytes: u64, conn: Arc<ConnReset>) -> Body {
        use http_body_util::BodyExt;
        Faulty {
            inner,
            state: CutState::Passing,
            conn,
            mode: Mode::Bytes { left: bytes },
        }
        .boxed()
    }

    fn cut(&mut self) {
        self.state = CutState::Cutting(Box::pin(tokio::time::sleep(Duration::from_millis(100))));
    }
}

impl HttpBody for Faulty {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                CutState::Done => return Poll::Ready(None),
                CutState::Cutting(sleep) => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.conn.reset();
                    this.state = CutState::Done;
                }
                CutState::Passing => break,
            }
        }
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(f))) => f,
            other => return other,
        };
        let Ok(data) = frame.into_data() else {
            return Poll::Ready(None);
        };
        match &mut this.mode {
            Mode::Stream {
                injector,
                target,
                seen,
            } => {
                *seen += 1;
                if *seen > 1 {
                    match injector.on_frame(target) {
                        Some(Effect::StreamCut) => {
                            let half = data.slice(..data.len() / 2);
                            this.cut();
                            return Poll::Ready(Some(Ok(Frame::data(half))));
                        }
                        Some(_) => {
                            this.state = CutState::Done;
                            return Poll::Ready(None);
                        }
                        None => {}
                    }
                }
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            Mode::Bytes { left } => {
                if (data.len() as u64) < *left {
                    *left -= data.len() as u64;
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                let part = data.slice(..*left as usize);
                *left = 0;
                this.cut();
                Poll::Ready(Some(Ok(Frame::data(part))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, CutState::Done)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
