//! S3 Express One Zone sessions: CreateSession, and the token every zonal request carries.

use super::*;

impl S3 {
    pub(super) async fn create_session(&self, bucket: &str) -> S3Result<Response<Body>> {
        if !is_directory_bucket(bucket) {
            return Err(S3Error::invalid_request(
                "CreateSession is only for directory buckets (name--azid--x-s3)",
            ));
        }
        // A session is made for a directory bucket that does not exist yet (S3 answers
        // NoSuchBucket): with a custom endpoint the SDK asks for a session before its own
        // CreateBucket of a directory bucket, so refusing one would stop the bucket being made.
        delay(&self.profile().create_session).await;
        let token = format!(
            "latlab-session-{:x}-{:016x}",
            self.next_id(),
            rand::random::<u64>()
        );
        let duration = self.session_duration();
        let expires_ms = self.clock.now_micros() / 1000 + duration.as_millis() as i64;
        let now = self.clock.now();
        self.sessions.lock().insert(
            token.clone(),
            Session {
                bucket: bucket.to_string(),
                expires: now + duration,
                expires_ms,
            },
        );
        // Old sessions are forgotten so the table stays small.
        self.sessions
            .lock()
            .retain(|_, s| s.expires + Duration::from_secs(600) > now);
        *self.create_sessions.lock() += 1;
        let inner = format!(
            "<Credentials>{}{}{}{}</Credentials>",
            el("SessionToken", &token),
            el("SecretAccessKey", "latlab-session-secret"),
            el("AccessKeyId", "LATLABSESSION"),
            el("Expiration", rfc3339_ms(expires_ms))
        );
        Ok(xml_response(200, doc("CreateSessionResult", &inner)))
    }

    pub(super) fn check_session(&self, h: &HeaderMap, bucket: &str) -> S3Result<()> {
        let Some(token) = header(h, "x-amz-s3session-token") else {
            return Err(S3Error::new(
                403,
                "AccessDenied",
                "Directory buckets require session authentication: send CreateSession and the x-amz-s3session-token header",
            ));
        };
        let sessions = self.sessions.lock();
        let Some(s) = sessions.get(token) else {
            return Err(S3Error::new(
                400,
                "InvalidToken",
                "The provided token is malformed or otherwise invalid.",
            ));
        };
        if s.bucket != bucket {
            return Err(S3Error::new(
                403,
                "AccessDenied",
                format!(
                    "the session token was created for bucket {}, not {bucket}",
                    s.bucket
                ),
            ));
        }
        if self.clock.now() >= s.expires {
            return Err(
                S3Error::new(400, "ExpiredToken", "The provided token has expired.")
                    .with("Expiration", rfc3339_ms(s.expires_ms)),
            );
        }
        Ok(())
    }
}
