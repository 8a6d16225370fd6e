//! TCP keepalive options on a connected socket: PostgreSQL's
//! `tcp_keepalives_idle`, `tcp_keepalives_interval`, `tcp_keepalives_count`
//! and `tcp_user_timeout` on the server side, libpq's `keepalives*` and
//! `tcp_user_timeout` connection options on the client side (the
//! walreceiver's `primary_conninfo`).
//!
//! Both sides follow PostgreSQL's rule: `SO_KEEPALIVE` is on for every TCP
//! connection, and a value of 0 means the system's default, which is read
//! once from a fresh socket so that a value set earlier can be put back
//! (PostgreSQL's `pq_setkeepalives*` remember the default the same way).
//! Unix-domain sockets have no such options: callers skip them.
//!
//! Why it matters: a peer that vanishes without a FIN or RST (a dead host,
//! a black-holed path) leaves an idle connection open for hours under the
//! kernel defaults (7,200 s idle, 9 probes 75 s apart). Keepalives bound
//! that for connections that send nothing; `tcp_user_timeout` bounds it for
//! connections with unacknowledged data. `wal_sender_timeout` and
//! `wal_receiver_timeout` do the same for replication at the protocol level.

use std::io;
use std::os::fd::RawFd;
use std::sync::OnceLock;

/// One of the four options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepaliveOpt {
    /// `TCP_KEEPIDLE`, seconds of idleness before the first probe.
    Idle,
    /// `TCP_KEEPINTVL`, seconds between probes.
    Interval,
    /// `TCP_KEEPCNT`, unanswered probes before the connection is dead.
    Count,
    /// `TCP_USER_TIMEOUT`, milliseconds transmitted data may stay
    /// unacknowledged before the connection is dead.
    UserTimeout,
}

impl KeepaliveOpt {
    /// All four, in the order of [`Keepalives::values`].
    pub const ALL: [KeepaliveOpt; 4] = [
        KeepaliveOpt::Idle,
        KeepaliveOpt::Interval,
        KeepaliveOpt::Count,
        KeepaliveOpt::UserTimeout,
    ];

    /// The server setting that controls it.
    pub fn setting(self) -> &'static str {
        match self {
            KeepaliveOpt::Idle => "tcp_keepalives_idle",
            KeepaliveOpt::Interval => "tcp_keepalives_interval",
            KeepaliveOpt::Count => "tcp_keepalives_count",
            KeepaliveOpt::UserTimeout => "tcp_user_timeout",
        }
    }

    fn sockopt(self) -> libc::c_int {
        match self {
            KeepaliveOpt::Idle => libc::TCP_KEEPIDLE,
            KeepaliveOpt::Interval => libc::TCP_KEEPINTVL,
            KeepaliveOpt::Count => libc::TCP_KEEPCNT,
            KeepaliveOpt::UserTimeout => libc::TCP_USER_TIMEOUT,
        }
    }

    fn index(self) -> usize {
        match self {
            KeepaliveOpt::Idle => 0,
            KeepaliveOpt::Interval => 1,
            KeepaliveOpt::Count => 2,
            KeepaliveOpt::UserTimeout => 3,
        }
    }
}

/// Values for the four options; 0 is the system default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keepalives {
    /// Seconds before the first probe.
    pub idle: i32,
    /// Seconds between probes.
    pub interval: i32,
    /// Probes before giving up.
    pub count: i32,
    /// Milliseconds of unacknowledged data before giving up.
    pub user_timeout: i32,
}

impl Keepalives {
    /// The values in [`KeepaliveOpt::ALL`]'s order.
    pub fn values(&self) -> [i32; 4] {
        [self.idle, self.interval, self.count, self.user_timeout]
    }

    /// The value of one option.
    pub fn get(&self, opt: KeepaliveOpt) -> i32 {
        self.values()[opt.index()]
    }
}

/// Turns `SO_KEEPALIVE` on and sets every option of `k` (0: the system
/// default).
pub fn set_keepalives(fd: RawFd, k: &Keepalives) -> io::Result<()> {
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    for opt in KeepaliveOpt::ALL {
        set_option(fd, opt, k.get(opt))?;
    }
    Ok(())
}

/// Sets one option; 0 puts back the system default. Negative values are
/// refused (the settings' ranges already exclude them).
pub fn set_option(fd: RawFd, opt: KeepaliveOpt, value: i32) -> io::Result<()> {
    if value < 0 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let v = if value == 0 {
        system_default(opt)
    } else {
        value
    };
    setsockopt(fd, libc::IPPROTO_TCP, opt.sockopt(), v)
}

/// The option's value on the socket now (what PostgreSQL's SHOW prints).
pub fn get_option(fd: RawFd, opt: KeepaliveOpt) -> io::Result<i32> {
    getsockopt(fd, libc::IPPROTO_TCP, opt.sockopt())
}

/// The kernel's default for `opt`, read once from a fresh TCP socket
/// (0 if that cannot be done: a user timeout of 0 is the default anyway,
/// and the others are then left as they are).
fn system_default(opt: KeepaliveOpt) -> i32 {
    static DEFAULTS: OnceLock<[i32; 4]> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let mut out = [0; 4];
        // SAFETY: socket(2) with constant arguments; the descriptor is
        // closed below and used for nothing else.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        if fd < 0 {
            return out;
        }
        for opt in KeepaliveOpt::ALL {
            out[opt.index()] = get_option(fd, opt).unwrap_or(0);
        }
        // SAFETY: `fd` was returned by socket(2) above and is closed once.
        unsafe { libc::close(fd) };
        out
    })[opt.index()]
}

fn setsockopt(fd: RawFd, level: libc::c_int, name: libc::c_int, value: i32) -> io::Result<()> {
    let v: libc::c_int = value;
    // SAFETY: `v` is a live c_int and the length passed is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn getsockopt(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are live locals the kernel writes at most
    // `len` bytes into.
    let r = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn set_read_back_and_restore_the_default() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let fd = c.as_raw_fd();
        let default_idle = get_option(fd, KeepaliveOpt::Idle).unwrap();
        let k = Keepalives {
            idle: 11,
            interval: 3,
            count: 4,
            user_timeout: 5000,
        };
        set_keepalives(fd, &k).unwrap();
        for opt in KeepaliveOpt::ALL {
            assert_eq!(get_option(fd, opt).unwrap(), k.get(opt), "{opt:?}");
        }
        set_option(fd, KeepaliveOpt::Idle, 0).unwrap();
        assert_eq!(get_option(fd, KeepaliveOpt::Idle).unwrap(), default_idle);
        assert!(set_option(fd, KeepaliveOpt::Count, -1).is_err());
        // A bad descriptor is an error, not a crash.
        assert!(get_option(-1, KeepaliveOpt::Idle).is_err());
    }
}
