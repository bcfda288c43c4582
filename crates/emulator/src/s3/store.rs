//! Where object bytes live: in memory up to a budget, in files under a temporary directory beyond
//! it (removed when the emulator stops), and never beyond a total cap, which is a clear error
//! rather than an exhausted machine.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::io::AsyncWriteExt;

use super::error::S3Error;

/// Bytes of one stored piece (an object, or a part of one).
pub enum Blob {
    Mem(Bytes),
    File { path: PathBuf, len: u64 },
}

/// A stored piece; dropping the last reference frees its memory or deletes its file.
pub struct Stored {
    pub blob: Blob,
    storage: Arc<Storage>,
}

impl Stored {
    pub fn len(&self) -> u64 {
        match &self.blob {
            Blob::Mem(b) => b.len() as u64,
            Blob::File { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Stored {
    fn drop(&mut self) {
        let len = self.len();
        self.storage.total.fetch_sub(len, Ordering::Relaxed);
        match &self.blob {
            Blob::Mem(_) => {
                self.storage.memory.fetch_sub(len, Ordering::Relaxed);
            }
            Blob::File { path, .. } => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

pub struct Storage {
    /// Bytes held in memory / in total (memory and files).
    memory: AtomicU64,
    total: AtomicU64,
    pub memory_cap: u64,
    pub total_cap: u64,
    dir: Mutex<Option<tempfile::TempDir>>,
    files: AtomicU64,
}

impl Storage {
    pub fn new(memory_cap: u64, total_cap: u64) -> Arc<Storage> {
        Arc::new(Storage {
            memory: AtomicU64::new(0),
            total: AtomicU64::new(0),
            memory_cap,
            total_cap,
            dir: Mutex::new(None),
            files: AtomicU64::new(0),
        })
    }

    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub fn memory(&self) -> u64 {
        self.memory.load(Ordering::Relaxed)
    }

    fn full(&self, more: u64) -> S3Error {
        S3Error::new(
            507,
            "InsufficientStorage",
            format!(
                "the emulator holds {} of its {}-byte storage cap and {more} more bytes do not fit: delete objects, or raise the limit s3.max_total_bytes",
                self.total(),
                self.total_cap
            ),
        )
    }

    fn new_file_path(&self) -> Result<PathBuf, S3Error> {
        let mut dir = self.dir.lock();
        if dir.is_none() {
            *dir = Some(
                tempfile::Builder::new()
                    .prefix("latlab-s3-")
                    .tempdir()
                    .map_err(|e| {
                        S3Error::new(
                            500,
                            "InternalError",
                            format!("cannot create a spill directory: {e}"),
                        )
                    })?,
            );
        }
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        Ok(dir
            .as_ref()
            .expect("created above")
            .path()
            .join(format!("blob-{n}")))
    }

    /// The directory spilled objects go to, once one was needed.
    pub fn spill_dir(&self) -> Option<PathBuf> {
        self.dir.lock().as_ref().map(|d| d.path().to_path_buf())
    }
}

/// Receives one piece's bytes, in memory while the budget allows, then in a file.
pub struct Writer {
    storage: Arc<Storage>,
    buf: BytesMut,
    file: Option<(tokio::fs::File, PathBuf)>,
    len: u64,
}

impl Writer {
    pub fn new(storage: &Arc<Storage>) -> Writer {
        Writer {
            storage: storage.clone(),
            buf: BytesMut::new(),
            file: None,
            len: 0,
        }
    }

    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), S3Error> {
        let n = chunk.len() as u64;
        let total = self.storage.total.fetch_add(n, Ordering::Relaxed) + n;
        if total > self.storage.total_cap {
            self.storage.total.fetch_sub(n, Ordering::Relaxed);
            return Err(self.storage.full(n));
        }
        self.len += n;
        if self.file.is_none() {
            let mem = self.storage.memory.fetch_add(n, Ordering::Relaxed) + n;
            if mem <= self.storage.memory_cap {
                self.buf.extend_from_slice(chunk);
                return Ok(());
            }
            // Over the memory budget: this piece moves to a file.
            self.storage
                .memory
                .fetch_sub(n + self.buf.len() as u64, Ordering::Relaxed);
            let path = self.storage.new_file_path()?;
            let mut f = tokio::fs::File::create(&path).await.map_err(io)?;
            f.write_all(&self.buf).await.map_err(io)?;
            self.buf = BytesMut::new();
            self.file = Some((f, path));
        }
        let (f, _) = self.file.as_mut().expect("set above");
        f.write_all(chunk).await.map_err(io)
    }

    pub async fn finish(mut self) -> Result<Stored, S3Error> {
        let storage = self.storage.clone();
        let blob = match self.file.take() {
            Some((mut f, path)) => {
                f.flush().await.map_err(io)?;
                Blob::File {
                    path,
                    len: self.len,
                }
            }
            None => Blob::Mem(std::mem::take(&mut self.buf).freeze()),
        };
        self.len = 0;
        Ok(Stored { blob, storage })
    }
}

impl Drop for Writer {
    /// An upload that failed half-way gives its bytes back.
    fn drop(&mut self) {
        if self.len > 0 {
            self.storage.total.fetch_sub(self.len, Ordering::Relaxed);
            if let Some((_, path)) = &self.file {
                let _ = std::fs::remove_file(path);
            } else {
                self.storage
                    .memory
                    .fetch_sub(self.buf.len() as u64, Ordering::Relaxed);
            }
        }
    }
}

fn io(e: std::io::Error) -> S3Error {
    S3Error::new(
        500,
        "InternalError",
        format!("the emulator's storage failed: {e}"),
    )
}

/// Reads `[start, end)` of a piece, a chunk of at most `chunk` bytes at a time.
pub struct Reader {
    stored: Arc<Stored>,
    pos: u64,
    end: u64,
    chunk: usize,
    file: Option<tokio::fs::File>,
}

impl Reader {
    pub fn new(stored: Arc<Stored>, start: u64, end: u64, chunk: usize) -> Reader {
        Reader {
            stored,
            pos: start,
            end,
            chunk,
            file: None,
        }
    }

    pub async fn next(&mut self) -> Result<Option<Bytes>, S3Error> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        if self.pos >= self.end {
            return Ok(None);
        }
        let n = (self.end - self.pos).min(self.chunk as u64);
        let out = match &self.stored.blob {
            Blob::Mem(b) => b.slice(self.pos as usize..(self.pos + n) as usize),
            Blob::File { path, .. } => {
                if self.file.is_none() {
                    let mut f = tokio::fs::File::open(path).await.map_err(io)?;
                    f.seek(std::io::SeekFrom::Start(self.pos))
                        .await
                        .map_err(io)?;
                    self.file = Some(f);
                }
                let f = self.file.as_mut().expect("opened above");
                let mut buf = vec![0u8; n as usize];
                f.read_exact(&mut buf).await.map_err(io)?;
                Bytes::from(buf)
            }
        };
        self.pos += n;
        Ok(Some(out))
    }
}
