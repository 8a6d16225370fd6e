//! `pg_hba.conf`: who may connect from where, and how they prove it
//! (PostgreSQL's `hba.c`).
//!
//! The file is a list of lines; the first line whose connection type,
//! database, user and address match the connection decides its
//! authentication method, and no match means refusal (28000 `no
//! pg_hba.conf entry for host …`). Nothing after the first match is
//! consulted, so a `reject` line early shadows a `trust` line later.
//!
//! ```text
//!   # TYPE  DATABASE     USER        ADDRESS          METHOD   [OPTIONS]
//!   local   all          all                          trust
//!   host    all          +admins     10.0.0.0/8       scram-sha-256
//!   host    replication  replicator  samenet          md5
//!   hostssl sales,"All"  @file?      ::1/128          password
//! ```
//!
//! * Fields are separated by blanks; `#` starts a comment; a line ending in
//!   `\` continues on the next. A field may be a comma-separated list.
//!   Double quotes make a word literal: `"all"` is a database named all,
//!   not the keyword.
//! * Types: `local` (Unix sockets: no such connections here, so such
//!   lines), `host`, `hostssl` (TLS connections only), `hostnossl`
//!   (plain TCP only).
//! * Databases: `all`, `sameuser`, `samerole` (a member of the role named
//!   like the database), `replication` (physical replication connections,
//!   which match nothing else), or names.
//! * Users: `all`, names, `+group` (members of the role).
//! * Addresses: `all`, `samehost`, `samenet`, `addr/len` (IPv4 or IPv6)
//!   or `addr mask` in two fields.
//! * Methods: `trust`, `reject`, `scram-sha-256`, `md5`, `password`,
//!   `peer` (local only), `cert` (hostssl only: a client certificate
//!   whose CN is the role name).
//! * Options: `name=value` words after the method; `map=NAME` (peer and
//!   cert) names a user name map of pg_ident.conf ([`crate::ident`]);
//!   `clientcert=verify-ca`
//!   or `verify-full` (hostssl only) asks for a client certificate
//!   checked against `ssl_ca_file`, with its CN equal to the role name for
//!   `verify-full`.
//!
//! A file with any invalid line is rejected as a whole, with every faulty
//! line reported ([`HbaError`]): at start-up that is fatal, at reload the
//! old rules stay ([`HbaRules`] is immutable; the node swaps an `Arc`).

use std::net::IpAddr;
use std::path::Path;

/// A connection's type as pg_hba.conf names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnType {
    /// Unix-domain socket.
    Local,
    /// TCP, with or without TLS.
    Host,
    /// TCP with TLS.
    HostSsl,
    /// TCP without TLS.
    HostNoSsl,
}

impl ConnType {
    /// The keyword.
    pub fn name(self) -> &'static str {
        match self {
            ConnType::Local => "local",
            ConnType::Host => "host",
            ConnType::HostSsl => "hostssl",
            ConnType::HostNoSsl => "hostnossl",
        }
    }
}

/// An authentication method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HbaMethod {
    /// Let the client in.
    Trust,
    /// Refuse the connection.
    Reject,
    /// SCRAM-SHA-256 exchange.
    ScramSha256,
    /// md5 challenge (SCRAM when the role's verifier is SCRAM).
    Md5,
    /// Cleartext password.
    Password,
    /// The OS user of a Unix-socket peer (local lines only).
    Peer,
    /// A client certificate whose CN is the role name (hostssl only).
    Cert,
}

/// `clientcert=`: what a hostssl line asks of the client certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientCert {
    /// Nothing.
    #[default]
    Off,
    /// A certificate that chains to `ssl_ca_file`.
    VerifyCa,
    /// That, and its CN is the role name (`cert` implies it).
    VerifyFull,
}

impl HbaMethod {
    /// The keyword.
    pub fn name(self) -> &'static str {
        match self {
            HbaMethod::Trust => "trust",
            HbaMethod::Reject => "reject",
            HbaMethod::ScramSha256 => "scram-sha-256",
            HbaMethod::Md5 => "md5",
            HbaMethod::Password => "password",
            HbaMethod::Peer => "peer",
            HbaMethod::Cert => "cert",
        }
    }

    fn parse(s: &str) -> Option<HbaMethod> {
        Some(match s {
            "trust" => HbaMethod::Trust,
            "reject" => HbaMethod::Reject,
            "scram-sha-256" => HbaMethod::ScramSha256,
            "md5" => HbaMethod::Md5,
            "password" => HbaMethod::Password,
            "peer" => HbaMethod::Peer,
            "cert" => HbaMethod::Cert,
            _ => return None,
        })
    }
}

/// One word of a list field: a keyword is only a keyword unquoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The text (quotes removed).
    pub text: String,
    /// True if it was written in double quotes.
    pub quoted: bool,
}

impl Token {
    fn is_keyword(&self, k: &str) -> bool {
        !self.quoted && self.text == k
    }

    /// As pg_hba_file_rules shows it (quoted words keep their quotes).
    pub fn shown(&self) -> String {
        if self.quoted {
            format!("\"{}\"", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// The address field of a host line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HbaAddress {
    /// `all`.
    All,
    /// `samehost`: any of the server's own addresses.
    SameHost,
    /// `samenet`: any address on a subnet the server is on.
    SameNet,
    /// An address and mask.
    Cidr {
        /// The network address.
        addr: IpAddr,
        /// The mask.
        mask: IpAddr,
    },
}

/// One valid line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HbaLine {
    /// 1-based line number in the file.
    pub line_number: usize,
    /// The line as written (for the log's "Connection matched …").
    pub raw: String,
    /// Connection type.
    pub conn_type: ConnType,
    /// Database list.
    pub databases: Vec<Token>,
    /// User list.
    pub users: Vec<Token>,
    /// Address (None on local lines).
    pub address: Option<HbaAddress>,
    /// How the address was written (address, netmask) for pg_hba_file_rules.
    pub address_shown: Option<(String, Option<String>)>,
    /// Method.
    pub method: HbaMethod,
    /// `name=value` options after the method.
    pub options: Vec<String>,
    /// `clientcert` (VerifyFull for `cert` lines).
    pub clientcert: ClientCert,
    /// `map=NAME`: the pg_ident.conf map (`peer` and `cert` lines).
    pub map: Option<String>,
}

/// A faulty line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HbaError {
    /// 1-based line number.
    pub line_number: usize,
    /// PostgreSQL's message (`invalid connection type "x"` …).
    pub message: String,
}

/// What a connection looks like to the matcher.
pub struct ConnectionFacts<'a> {
    /// The client's address (None: a Unix socket).
    pub peer: Option<IpAddr>,
    /// True if the connection uses TLS.
    pub ssl: bool,
    /// The role name it asks for.
    pub user: &'a str,
    /// The database it asks for.
    pub database: &'a str,
    /// True for a physical replication connection.
    pub replication: bool,
}

/// A parsed pg_hba.conf.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HbaRules {
    /// The valid lines, in file order.
    pub lines: Vec<HbaLine>,
}

/// Every line of the file, valid or not, as pg_hba_file_rules shows them.
pub type HbaFileRows = Vec<Result<HbaLine, HbaError>>;

impl HbaRules {
    /// Parses `text`; any faulty line makes the whole file invalid.
    pub fn parse(text: &str) -> Result<HbaRules, Vec<HbaError>> {
        all_or_errors(parse_rows(text)).map(|lines| HbaRules { lines })
    }

    /// Reads and parses the file at `path`. The outer error is an I/O one.
    pub fn load(path: &Path) -> std::io::Result<Result<HbaRules, Vec<HbaError>>> {
        Ok(HbaRules::parse(&std::fs::read_to_string(path)?))
    }

    /// The first line matching the connection; `member(role, group)` tells
    /// whether `role` is (directly or not) a member of `group` (and every
    /// role is a member of itself).
    pub fn find(
        &self,
        c: &ConnectionFacts<'_>,
        member: &dyn Fn(&str, &str) -> bool,
    ) -> Option<&HbaLine> {
        self.lines.iter().find(|l| line_matches(l, c, member))
    }
}

fn line_matches(l: &HbaLine, c: &ConnectionFacts<'_>, member: &dyn Fn(&str, &str) -> bool) -> bool {
    match (l.conn_type, c.peer) {
        (ConnType::Local, None) => {}
        (ConnType::Local, Some(_)) | (_, None) => return false,
        (ConnType::Host, Some(_)) => {}
        (ConnType::HostSsl, Some(_)) if c.ssl => {}
        (ConnType::HostNoSsl, Some(_)) if !c.ssl => {}
        _ => return false,
    }
    if let (Some(addr), Some(peer)) = (&l.address, c.peer) {
        if !address_matches(addr, peer) {
            return false;
        }
    }
    let db_ok = l.databases.iter().any(|d| {
        if c.replication {
            return d.is_keyword("replication");
        }
        if d.is_keyword("all") {
            true
        } else if d.is_keyword("sameuser") {
            c.database == c.user
        } else if d.is_keyword("samerole") || d.is_keyword("samegroup") {
            member(c.user, c.database)
        } else if d.is_keyword("replication") {
            false
        } else {
            d.text == c.database
        }
    });
    if !db_ok {
        return false;
    }
    l.users.iter().any(|u| {
        if u.is_keyword("all") {
            true
        } else if let Some(group) = u.text.strip_prefix('+').filter(|_| !u.quoted) {
            member(c.user, group)
        } else {
            u.text == c.user
        }
    })
}

fn normalize(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

fn in_net(peer: IpAddr, addr: IpAddr, mask: IpAddr) -> bool {
    match (normalize(peer), addr, mask) {
        (IpAddr::V4(p), IpAddr::V4(a), IpAddr::V4(m)) => {
            u32::from(p) & u32::from(m) == u32::from(a) & u32::from(m)
        }
        (IpAddr::V6(p), IpAddr::V6(a), IpAddr::V6(m)) => {
            u128::from(p) & u128::from(m) == u128::from(a) & u128::from(m)
        }
        _ => false,
    }
}

fn address_matches(a: &HbaAddress, peer: IpAddr) -> bool {
    match a {
        HbaAddress::All => true,
        HbaAddress::Cidr { addr, mask } => in_net(peer, *addr, *mask),
        HbaAddress::SameHost => local_interfaces()
            .iter()
            .any(|(ip, _)| normalize(*ip) == normalize(peer)),
        HbaAddress::SameNet => local_interfaces()
            .iter()
            .any(|(ip, mask)| in_net(peer, *ip, *mask)),
    }
}

/// The addresses and netmasks of this host's interfaces (getifaddrs).
fn local_interfaces() -> Vec<(IpAddr, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below; every
    // pointer is checked for null and the sockaddrs are read according to
    // their family.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            if let (Some(a), Some(m)) = (sockaddr_ip(ifa.ifa_addr), sockaddr_ip(ifa.ifa_netmask)) {
                out.push((a, m));
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// # Safety
/// `sa` is null or points at a sockaddr of its family's size.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let sin = &*(sa as *const libc::sockaddr_in);
            Some(IpAddr::from(
                u32::from_be(sin.sin_addr.s_addr).to_be_bytes(),
            ))
        }
        libc::AF_INET6 => {
            let sin6 = &*(sa as *const libc::sockaddr_in6);
            Some(IpAddr::from(sin6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

/// Splits the file into logical lines (continuations joined) of tokens,
/// each field a list of tokens. Returns (line number, raw text, fields).
pub(crate) fn tokenize(text: &str) -> Vec<(usize, String, Vec<Vec<Token>>)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut start = 0;
    for (i, line) in text.lines().enumerate() {
        if pending.is_empty() {
            start = i + 1;
        }
        let no_comment = strip_comment(line);
        if let Some(cont) = no_comment.trim_end().strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
            continue;
        }
        pending.push_str(no_comment);
        let logical = std::mem::take(&mut pending);
        let fields = split_fields(&logical);
        if !fields.is_empty() {
            out.push((start, logical.trim().to_string(), fields));
        }
    }
    if !pending.is_empty() {
        let fields = split_fields(&pending);
        if !fields.is_empty() {
            out.push((start, pending.trim().to_string(), fields));
        }
    }
    out
}

/// The line without its `#` comment (a `#` inside quotes is kept).
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Fields separated by blanks; each a comma-separated list of words.
fn split_fields(line: &str) -> Vec<Vec<Token>> {
    let mut fields = Vec::new();
    let mut field: Vec<Token> = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut in_quotes = false;
    let mut have_word = false;
    let mut after_comma = false;
    for c in line.chars() {
        if in_quotes {
            if c == '"' {
                in_quotes = false;
            } else {
                word.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                in_quotes = true;
                quoted = true;
                have_word = true;
                after_comma = false;
            }
            ',' => {
                field.push(Token {
                    text: std::mem::take(&mut word),
                    quoted,
                });
                quoted = false;
                have_word = false;
                after_comma = true;
            }
            c if c.is_whitespace() => {
                if have_word {
                    field.push(Token {
                        text: std::mem::take(&mut word),
                        quoted,
                    });
                    quoted = false;
                    have_word = false;
                }
                if !field.is_empty() && !after_comma {
                    fields.push(std::mem::take(&mut field));
                }
            }
            c => {
                word.push(c);
                have_word = true;
                after_comma = false;
            }
        }
    }
    if have_word {
        field.push(Token { text: word, quoted });
    }
    if !field.is_empty() {
        fields.push(field);
    }
    fields
}

fn single(field: Option<&Vec<Token>>) -> Option<&Token> {
    match field {
        Some(f) if f.len() == 1 => Some(&f[0]),
        _ => None,
    }
}

/// Every line, parsed or with its error (pg_hba_file_rules shows both).
pub fn parse_rows(text: &str) -> HbaFileRows {
    tokenize(text)
        .into_iter()
        .map(|(n, raw, fields)| {
            parse_line(n, &raw, &fields).map_err(|message| HbaError {
                line_number: n,
                message,
            })
        })
        .collect()
}

fn parse_line(n: usize, raw: &str, fields: &[Vec<Token>]) -> Result<HbaLine, String> {
    let mut it = fields.iter();
    let ty = single(it.next()).ok_or("multiple values specified for connection type")?;
    let conn_type = match ty.text.as_str() {
        "local" => ConnType::Local,
        "host" => ConnType::Host,
        "hostssl" => ConnType::HostSsl,
        "hostnossl" => ConnType::HostNoSsl,
        "hostgssenc" | "hostnogssenc" => {
            return Err(
                "hostgssenc record cannot match because GSSAPI is not supported by this build"
                    .into(),
            )
        }
        other => return Err(format!("invalid connection type \"{other}\"")),
    };
    let databases = it
        .next()
        .cloned()
        .ok_or("end-of-line before database specification")?;
    let users = it
        .next()
        .cloned()
        .ok_or("end-of-line before role specification")?;
    for t in databases.iter().chain(&users) {
        if !t.quoted && t.text.starts_with('@') {
            return Err(format!(
                "could not open secondary authentication file \"{}\": included files are not supported",
                t.text
            ));
        }
    }
    let (address, address_shown) = if conn_type == ConnType::Local {
        (None, None)
    } else {
        let a = single(it.next()).ok_or("end-of-line before IP address specification")?;
        let (addr, shown) = match a.text.as_str() {
            "all" if !a.quoted => (HbaAddress::All, (a.text.clone(), None)),
            "samehost" if !a.quoted => (HbaAddress::SameHost, (a.text.clone(), None)),
            "samenet" if !a.quoted => (HbaAddress::SameNet, (a.text.clone(), None)),
            text => {
                if let Some((ip, len)) = text.split_once('/') {
                    let ip: IpAddr = ip
                        .parse()
                        .map_err(|_| format!("invalid IP address \"{ip}\""))?;
                    let len: u32 = len
                        .parse()
                        .ok()
                        .filter(|l| *l <= if ip.is_ipv4() { 32 } else { 128 })
                        .ok_or_else(|| format!("invalid CIDR mask in address \"{text}\""))?;
                    let mask = mask_of(ip, len);
                    (
                        HbaAddress::Cidr { addr: ip, mask },
                        (ip.to_string(), Some(mask.to_string())),
                    )
                } else if let Ok(ip) = text.parse::<IpAddr>() {
                    let m = single(it.next()).ok_or("end-of-line before netmask specification")?;
                    let mask: IpAddr = m
                        .text
                        .parse()
                        .map_err(|_| format!("invalid IP mask \"{}\"", m.text))?;
                    if mask.is_ipv4() != ip.is_ipv4() {
                        return Err("IP address and mask do not match".into());
                    }
                    (
                        HbaAddress::Cidr { addr: ip, mask },
                        (ip.to_string(), Some(mask.to_string())),
                    )
                } else {
                    return Err(format!(
                        "invalid IP address \"{text}\": host names are not supported"
                    ));
                }
            }
        };
        (Some(addr), Some(shown))
    };
    let m = single(it.next()).ok_or("end-of-line before authentication method")?;
    let method = HbaMethod::parse(&m.text)
        .ok_or_else(|| format!("invalid authentication method \"{}\"", m.text))?;
    if method == HbaMethod::Peer && conn_type != ConnType::Local {
        return Err("peer authentication is only supported on local sockets".into());
    }
    if method == HbaMethod::Cert && conn_type != ConnType::HostSsl {
        return Err("cert authentication is only supported on hostssl connections".into());
    }
    let mut options = Vec::new();
    let mut map = None;
    let mut clientcert = if method == HbaMethod::Cert {
        ClientCert::VerifyFull
    } else {
        ClientCert::Off
    };
    for f in it {
        for t in f {
            let Some((name, value)) = t.text.split_once('=') else {
                return Err(format!(
                    "authentication option not in name=value format: {}",
                    t.text
                ));
            };
            if name == "map" {
                if !matches!(method, HbaMethod::Peer | HbaMethod::Cert) {
                    return Err("authentication option \"map\" is only valid for authentication methods ident, peer, gssapi, sspi, and cert".into());
                }
                map = Some(value.to_string());
            }
            if name == "clientcert" {
                if conn_type != ConnType::HostSsl {
                    return Err("clientcert can only be configured for \"hostssl\" rows".into());
                }
                clientcert = match value {
                    "verify-full" => ClientCert::VerifyFull,
                    "verify-ca" if method == HbaMethod::Cert => {
                        return Err("clientcert only accepts \"verify-full\" when using \"cert\" authentication".into())
                    }
                    "verify-ca" => ClientCert::VerifyCa,
                    v => return Err(format!("invalid value for clientcert: \"{v}\"")),
                };
            }
            options.push(t.text.clone());
        }
    }
    Ok(HbaLine {
        line_number: n,
        raw: raw.to_string(),
        conn_type,
        databases,
        users,
        address,
        address_shown,
        method,
        options,
        clientcert,
        map,
    })
}

fn mask_of(ip: IpAddr, len: u32) -> IpAddr {
    match ip {
        IpAddr::V4(_) => {
            let m = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            IpAddr::from(m.to_be_bytes())
        }
        IpAddr::V6(_) => {
            let m = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            IpAddr::from(m.to_be_bytes())
        }
    }
}

/// The file `primary` writes on an empty data directory, as initdb does:
/// `local_method` for Unix-socket lines, `host_method` for the loopback
/// host lines and replication lines.
pub fn initial_file(local_method: &str, host_method: &str) -> String {
    format!(
        "# PostgreSQL Client Authentication Configuration File\n\
         # ===================================================\n\
         #\n\
         # TYPE  DATABASE        USER            ADDRESS                 METHOD\n\
         \n\
         # \"local\" is for Unix domain socket connections only\n\
         local   all             all                                     {local_method}\n\
         # IPv4 local connections:\n\
         host    all             all             127.0.0.1/32            {host_method}\n\
         # IPv6 local connections:\n\
         host    all             all             ::1/128                 {host_method}\n\
         # Allow replication connections from localhost, by a user with the\n\
         # replication privilege.\n\
         local   replication     all                                     {local_method}\n\
         host    replication     all             127.0.0.1/32            {host_method}\n\
         host    replication     all             ::1/128                 {host_method}\n"
    )
}

/// The valid lines if every line is, else every error: one faulty line
/// keeps the whole file out (pg_hba.conf and pg_ident.conf alike).
pub fn all_or_errors<T, E>(rows: impl IntoIterator<Item = Result<T, E>>) -> Result<Vec<T>, Vec<E>> {
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for row in rows {
        match row {
            Ok(l) => lines.push(l),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(lines)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(
        peer: &str,
        user: &'a str,
        database: &'a str,
        replication: bool,
    ) -> ConnectionFacts<'a> {
        ConnectionFacts {
            peer: Some(peer.parse().unwrap()),
            ssl: false,
            user,
            database,
            replication,
        }
    }

    fn no_groups(role: &str, group: &str) -> bool {
        role == group
    }

    #[test]
    fn initial_file_parses_and_matches_loopback_only() {
        let r = HbaRules::parse(&initial_file("trust", "trust")).unwrap();
        assert_eq!(r.lines.len(), 6);
        let l = r.find(
            &facts("127.0.0.1", "postgres", "postgres", false),
            &no_groups,
        );
        assert_eq!(l.unwrap().line_number, 9);
        assert!(r.find(&facts("::1", "x", "y", false), &no_groups).is_some());
        assert!(r
            .find(&facts("10.1.2.3", "x", "y", false), &no_groups)
            .is_none());
        let rep = r.find(&facts("127.0.0.1", "x", "y", true), &no_groups);
        assert_eq!(rep.unwrap().line_number, 15);
    }

    #[test]
    fn first_match_wins_and_keywords() {
        let text = "host all bob 0.0.0.0/0 reject\n\
                    host sameuser all 10.0.0.0 255.0.0.0 md5\n\
                    host \"all\",db2 +admins,\"+x\" 10.0.0.0/8 password # comment\n\
                    host replication rep samenet scram-sha-256\n\
                    host all all ::/0 \\\n  trust\n";
        let r = HbaRules::parse(text).unwrap();
        let groups =
            |role: &str, group: &str| role == group || (role == "ann" && group == "admins");
        let m = |peer, user, db, rep| {
            r.find(&facts(peer, user, db, rep), &groups)
                .map(|l| l.method)
        };
        assert_eq!(m("10.0.0.1", "bob", "bob", false), Some(HbaMethod::Reject));
        assert_eq!(m("10.0.0.1", "al", "al", false), Some(HbaMethod::Md5));
        assert_eq!(
            m("10.0.0.1", "ann", "all", false),
            Some(HbaMethod::Password)
        );
        assert_eq!(
            m("10.0.0.1", "ann", "db2", false),
            Some(HbaMethod::Password)
        );
        assert_eq!(m("10.0.0.1", "+x", "db2", false), Some(HbaMethod::Password));
        assert_eq!(m("10.0.0.1", "al", "db2", false), None);
        assert_eq!(m("::1", "al", "db2", false), Some(HbaMethod::Trust));
        assert_eq!(
            m("::ffff:10.0.0.1", "al", "al", false),
            Some(HbaMethod::Md5)
        );
        assert_eq!(r.lines[4].line_number, 5);
    }

    #[test]
    fn ssl_lines_cert_and_clientcert() {
        let text = "hostssl all certuser 127.0.0.1/32 cert\n\
                    hostssl all causer 127.0.0.1/32 md5 clientcert=verify-ca\n\
                    hostnossl all all 127.0.0.1/32 trust\n";
        let r = HbaRules::parse(text).unwrap();
        assert_eq!(
            r.lines[0].clientcert,
            ClientCert::VerifyFull,
            "cert implies verify-full"
        );
        assert_eq!(r.lines[1].clientcert, ClientCert::VerifyCa);
        let mut f = facts("127.0.0.1", "certuser", "db", false);
        assert_eq!(
            r.find(&f, &no_groups).map(|l| l.method),
            Some(HbaMethod::Trust),
            "plain: hostnossl"
        );
        f.ssl = true;
        assert_eq!(
            r.find(&f, &no_groups).map(|l| l.method),
            Some(HbaMethod::Cert),
            "TLS: hostssl"
        );
        let bad = "host all all 127.0.0.1/32 cert\n\
                   host all all 127.0.0.1/32 md5 clientcert=verify-ca\n\
                   hostssl all all 127.0.0.1/32 cert clientcert=verify-ca\n\
                   hostssl all all 127.0.0.1/32 md5 clientcert=yes\n";
        let msgs: Vec<String> = HbaRules::parse(bad)
            .unwrap_err()
            .into_iter()
            .map(|e| e.message)
            .collect();
        assert_eq!(
            msgs,
            vec![
                "cert authentication is only supported on hostssl connections",
                "clientcert can only be configured for \"hostssl\" rows",
                "clientcert only accepts \"verify-full\" when using \"cert\" authentication",
                "invalid value for clientcert: \"yes\"",
            ]
        );
    }

    #[test]
    fn bad_lines_are_reported() {
        let text = "host all all 127.0.0.1/32 trust\n\
                    hots all all 127.0.0.1/32 trust\n\
                    host all all 127.0.0.1/33 trust\n\
                    host all all 127.0.0.1/32 ident\n\
                    host all\n\
                    host all all 127.0.0.1/32 md5 foo\n";
        let errs = HbaRules::parse(text).unwrap_err();
        let msgs: Vec<(usize, &str)> = errs
            .iter()
            .map(|e| (e.line_number, e.message.as_str()))
            .collect();
        assert_eq!(
            msgs,
            vec![
                (2, "invalid connection type \"hots\""),
                (3, "invalid CIDR mask in address \"127.0.0.1/33\""),
                (4, "invalid authentication method \"ident\""),
                (5, "end-of-line before role specification"),
                (6, "authentication option not in name=value format: foo"),
            ]
        );
    }
}
