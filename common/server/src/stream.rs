//! A client connection's socket: TCP, a Unix-domain socket
//! (`unix_socket_directories`), or TLS over TCP ([`super::tls`]).
//! Sessions, the cross-core hand-off ([`ClientStream::into_std`] /
//! [`StdClientStream::into_tokio`]) and the walsender handle all three the
//! same way; only authentication (`local` lines of pg_hba.conf, `peer`,
//! `hostssl`) and what monitoring shows differ. TLS is boxed so that the
//! plain variants stay small; a plain socket pays one more match arm, no
//! indirection.
//!
//! A TLS stream buffers: what it was given is encrypted into rustls's
//! buffer and may wait there, so a writer calls `flush` after `write_all`
//! (a no-op on the plain variants).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::tls::ServerTls;

/// An accepted client socket.
#[derive(Debug)]
pub enum ClientStream {
    /// TCP.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
    /// TLS over TCP.
    Tls(Box<ServerTls>),
    /// The socket is parked ([`crate::park`]): no descriptor, no I/O
    /// until [`ClientStream::unpark`] puts it back.
    Parked(ParkedKind),
}

/// What a parked socket was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParkedKind {
    /// TCP.
    Tcp,
    /// A Unix-domain socket.
    Unix,
}

fn parked_error() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the client socket is parked")
}

/// A [`ClientStream`] between runtimes (deregistered from the one it
/// left).
#[derive(Debug)]
pub enum StdClientStream {
    /// TCP.
    Tcp(std::net::TcpStream),
    /// A Unix-domain socket.
    Unix(std::os::unix::net::UnixStream),
    /// TLS over a parked TCP socket.
    Tls(Box<ServerTls>),
}

impl ClientStream {
    /// Leaves this runtime (to be registered with another's reactor).
    pub fn into_std(self) -> io::Result<StdClientStream> {
        Ok(match self {
            ClientStream::Tcp(s) => StdClientStream::Tcp(s.into_std()?),
            ClientStream::Unix(s) => StdClientStream::Unix(s.into_std()?),
            ClientStream::Tls(mut s) => {
                s.get_mut().0.park()?;
                StdClientStream::Tls(s)
            }
            ClientStream::Parked(_) => return Err(parked_error()),
        })
    }

    /// Leaves the runtime as a bare socket to be parked ([`crate::park`]):
    /// plain TCP and Unix sockets only (a TLS session's state is in
    /// rustls, above the socket, and is not parked). The stream is
    /// [`ClientStream::Parked`] until [`ClientStream::unpark`].
    pub fn take_for_park(&mut self) -> io::Result<Option<(ParkedKind, std::os::fd::OwnedFd)>> {
        let kind = match self {
            ClientStream::Tcp(_) => ParkedKind::Tcp,
            ClientStream::Unix(_) => ParkedKind::Unix,
            ClientStream::Tls(_) | ClientStream::Parked(_) => return Ok(None),
        };
        Ok(
            match std::mem::replace(self, ClientStream::Parked(kind)).into_std()? {
                StdClientStream::Tcp(s) => Some((kind, s.into())),
                StdClientStream::Unix(s) => Some((kind, s.into())),
                StdClientStream::Tls(_) => None,
            },
        )
    }

    /// Puts a socket back from the parking lot, registered with the
    /// current runtime (the descriptor number may differ from before).
    pub fn unpark(&mut self, kind: ParkedKind, fd: std::os::fd::OwnedFd) -> io::Result<()> {
        *self = match kind {
            ParkedKind::Tcp => ClientStream::Tcp(TcpStream::from_std(fd.into())?),
            ParkedKind::Unix => ClientStream::Unix(UnixStream::from_std(fd.into())?),
        };
        Ok(())
    }

    /// True for plain TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(self, ClientStream::Tcp(_))
    }

    /// True over TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, ClientStream::Tls(_))
    }

    /// The TLS stream, if this is one.
    pub fn tls(&self) -> Option<&ServerTls> {
        match self {
            ClientStream::Tls(s) => Some(s),
            _ => None,
        }
    }

    /// The TCP socket's descriptor (under TLS too); None for a Unix one.
    /// It stays the same when the connection moves between cores, and is
    /// open for as long as the connection: the session sets and reads its
    /// keepalive options through it ([`protocol::sockopt`]).
    pub fn tcp_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        match self {
            ClientStream::Tcp(s) => Some(s.as_raw_fd()),
            ClientStream::Unix(_) => None,
            ClientStream::Tls(s) => s.get_ref().0.tcp().map(|t| t.as_raw_fd()),
            ClientStream::Parked(_) => None,
        }
    }

    /// TCP_NODELAY on a TCP socket; nothing on a Unix one.
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            ClientStream::Tcp(s) => s.set_nodelay(on),
            ClientStream::Unix(_) => Ok(()),
            ClientStream::Tls(s) => match s.get_ref().0.tcp() {
                Some(t) => t.set_nodelay(on),
                None => Ok(()),
            },
            ClientStream::Parked(_) => Err(parked_error()),
        }
    }

    /// The server's address of a TCP connection.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            ClientStream::Tcp(s) => s.local_addr().ok(),
            ClientStream::Unix(_) => None,
            ClientStream::Tls(s) => s.get_ref().0.tcp().and_then(|t| t.local_addr().ok()),
            ClientStream::Parked(_) => None,
        }
    }

    /// Waits until the socket may be read (see `TcpStream::readable`).
    /// Over TLS that is the TCP socket's readiness, which says nothing of
    /// plaintext rustls may already hold: a TLS reader uses `read_buf`.
    pub async fn readable(&self) -> io::Result<()> {
        match self {
            ClientStream::Tcp(s) => s.readable().await,
            ClientStream::Unix(s) => s.readable().await,
            ClientStream::Tls(s) => match s.get_ref().0.tcp() {
                Some(t) => t.readable().await,
                None => Ok(()),
            },
            ClientStream::Parked(_) => Err(parked_error()),
        }
    }

    /// Reads what is there without waiting (see `TcpStream::try_read_buf`;
    /// over TLS, one poll of the TLS stream).
    pub fn try_read_buf<B: bytes::BufMut>(&mut self, buf: &mut B) -> io::Result<usize> {
        match self {
            ClientStream::Tcp(s) => s.try_read_buf(buf),
            ClientStream::Unix(s) => s.try_read_buf(buf),
            ClientStream::Tls(s) => {
                // SAFETY: ReadBuf::uninit never de-initialises bytes; the
                // reader only writes into the spare capacity.
                let dst = unsafe { buf.chunk_mut().as_uninit_slice_mut() };
                let mut rb = ReadBuf::uninit(dst);
                let mut cx = Context::from_waker(std::task::Waker::noop());
                match Pin::new(s.as_mut()).poll_read(&mut cx, &mut rb) {
                    Poll::Ready(Ok(())) => {
                        let n = rb.filled().len();
                        // SAFETY: the reader initialised `n` bytes.
                        unsafe { buf.advance_mut(n) };
                        Ok(n)
                    }
                    Poll::Ready(Err(e)) => Err(e),
                    Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
                }
            }
            ClientStream::Parked(_) => Err(parked_error()),
        }
    }

    /// The effective user id of the process at the other end of a Unix
    /// socket (`peer` authentication); None over TCP.
    pub fn peer_uid(&self) -> Option<u32> {
        match self {
            ClientStream::Tcp(_) | ClientStream::Tls(_) | ClientStream::Parked(_) => None,
            ClientStream::Unix(s) => s.peer_cred().ok().map(|c| c.uid()),
        }
    }
}

impl StdClientStream {
    /// Registers the socket with the current runtime.
    pub fn into_tokio(self) -> io::Result<ClientStream> {
        Ok(match self {
            StdClientStream::Tcp(s) => ClientStream::Tcp(TcpStream::from_std(s)?),
            StdClientStream::Unix(s) => ClientStream::Unix(UnixStream::from_std(s)?),
            StdClientStream::Tls(mut s) => {
                s.get_mut().0.unpark()?;
                ClientStream::Tls(s)
            }
        })
    }
}

impl AsyncRead for ClientStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            ClientStream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            ClientStream::Parked(_) => Poll::Ready(Err(parked_error())),
        }
    }
}

impl AsyncWrite for ClientStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            ClientStream::Unix(s) => Pin::new(s).poll_write(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            ClientStream::Parked(_) => Poll::Ready(Err(parked_error())),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_flush(cx),
            ClientStream::Unix(s) => Pin::new(s).poll_flush(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            ClientStream::Parked(_) => Poll::Ready(Err(parked_error())),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            ClientStream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            ClientStream::Parked(_) => Poll::Ready(Err(parked_error())),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            ClientStream::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            ClientStream::Parked(_) => Poll::Ready(Err(parked_error())),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            ClientStream::Tcp(s) => s.is_write_vectored(),
            ClientStream::Unix(s) => s.is_write_vectored(),
            ClientStream::Tls(s) => s.is_write_vectored(),
            ClientStream::Parked(_) => false,
        }
    }
}

/// Who is at the other end, for logs: `host:port`, or `[local]` as
/// PostgreSQL writes a Unix-socket client.
pub fn peer_text(peer: Option<std::net::SocketAddr>) -> String {
    match peer {
        Some(p) => p.to_string(),
        None => "[local]".into(),
    }
}

/// The login name of OS user `uid` (`peer` authentication), None if the
/// system has no such user.
pub fn os_user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid out-parameter; getpwuid_r
    // writes the strings it points to into `buf`, which outlives the reads
    // below, and sets `found` to null or to `pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            uid,
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pwd.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}
