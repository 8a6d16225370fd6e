//! The inet and cidr operators and functions (PostgreSQL's `network.c`).
//!
//! Values and their arithmetic live in [`pgtypes::inet`]; this module
//! binds them like `jsonfuncs` binds json:
//!
//! * Operators (`<<`, `<<=`, `>>`, `>>=`, `&&`, `~`, `&`, `|`, `+`, `-`)
//!   resolve in [`resolve_operator`] into a [`NetFunc`] the binder calls
//!   like any function; comparisons (`=`, `<` …) are the generic ones
//!   (`cmp_sql` orders inet by `network_cmp`).
//! * Functions (`host`, `masklen`, `network`, `abbrev`, …) resolve in
//!   [`resolve`], called by `functions::resolve_function`;
//!   `inet_client_addr()` / `inet_server_addr()` and their `_port`
//!   forms read the session's socket addresses through
//!   `EvalContext::connection_addrs` (NULL outside a TCP session).
//!
//! cidr is binary-coercible to inet, so every operator and most functions
//! take inet and a cidr argument is coerced; `abbrev` and `set_masklen`
//! have cidr overloads of their own, and an `unknown` literal argument
//! picks the inet one (inet is the preferred type of the network
//! category). `text(inet)`, `cidr(inet)` and `inet(text)` are casts.

use std::sync::Arc;

use pgtypes::error::{PgError, PgResult};
use pgtypes::inet::Inet;
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

use crate::functions::{EvalContext, Func, FuncSig};

/// An inet/cidr operator or function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetFunc {
    /// host(inet) → text: the address without a mask length.
    Host,
    /// hostmask(inet) → inet.
    Hostmask,
    /// masklen(inet) → int4.
    Masklen,
    /// netmask(inet) → inet.
    Netmask,
    /// network(inet) → cidr.
    Network,
    /// broadcast(inet) → inet.
    Broadcast,
    /// family(inet) → int4: 4 or 6.
    Family,
    /// set_masklen(inet, int4) → inet; set_masklen(cidr, int4) → cidr.
    SetMasklen {
        /// The cidr overload (host bits cleared).
        cidr: bool,
    },
    /// abbrev(inet) / abbrev(cidr) → text.
    Abbrev {
        /// The cidr overload (`10.1/16`).
        cidr: bool,
    },
    /// inet_same_family(inet, inet) → bool.
    SameFamily,
    /// inet_merge(inet, inet) → cidr.
    Merge,
    /// `<<` / `<<=` (`or_equal`), and `>>` / `>>=` with the arguments
    /// swapped at bind time.
    SubnetOf {
        /// `<<=` / `>>=`.
        or_equal: bool,
    },
    /// `&&`
    Overlaps,
    /// `~ inet`
    Not,
    /// `inet & inet`
    And,
    /// `inet | inet`
    Or,
    /// `inet + int8` (`int8 + inet` swaps the arguments at bind time).
    AddInt,
    /// `inet - int8`
    SubInt,
    /// `inet - inet` → int8
    Minus,
    /// inet_client_addr() / inet_server_addr() (`server`) → inet: NULL
    /// when the session is not a TCP connection.
    ConnAddr {
        /// The server's end.
        server: bool,
    },
    /// inet_client_port() / inet_server_port() → int4.
    ConnPort {
        /// The server's end.
        server: bool,
    },
}

/// True for inet and cidr.
pub fn is_network(t: SqlType) -> bool {
    matches!(t, SqlType::Inet | SqlType::Cidr)
}

/// Resolves a binary operator over inet/cidr operands: the function, the
/// argument types (after any swap), the result type, and whether the
/// operands are swapped. None if the operands are not network values.
pub fn resolve_operator(
    op: &str,
    l: SqlType,
    r: SqlType,
) -> Option<(NetFunc, [SqlType; 2], SqlType, bool)> {
    use SqlType as T;
    // An unknown operand takes the other's type (as PostgreSQL assumes
    // for an operator's unknown argument).
    let net = |t: SqlType| is_network(t) || t == T::Unknown;
    let both = net(l) && net(r) && (is_network(l) || is_network(r));
    let inet2 = [T::Inet, T::Inet];
    Some(match op {
        "<<" | "<<=" if both => (
            NetFunc::SubnetOf {
                or_equal: op == "<<=",
            },
            inet2,
            T::Bool,
            false,
        ),
        ">>" | ">>=" if both => (
            NetFunc::SubnetOf {
                or_equal: op == ">>=",
            },
            inet2,
            T::Bool,
            true,
        ),
        "&&" if both => (NetFunc::Overlaps, inet2, T::Bool, false),
        "&" if both => (NetFunc::And, inet2, T::Inet, false),
        "|" if both => (NetFunc::Or, inet2, T::Inet, false),
        "-" if both => (NetFunc::Minus, inet2, T::Int8, false),
        "+" | "-" if is_network(l) && (r.is_integer() || r == T::Unknown) => {
            let f = if op == "+" {
                NetFunc::AddInt
            } else {
                NetFunc::SubInt
            };
            (f, [T::Inet, T::Int8], T::Inet, false)
        }
        "+" if is_network(r) && (l.is_integer() || l == T::Unknown) => {
            (NetFunc::AddInt, [T::Inet, T::Int8], T::Inet, true)
        }
        _ => return None,
    })
}

/// Resolves a function over network values; None if `name` is not one
/// of them (the caller reports 42883 for a wrong argument list).
pub fn resolve(name: &str, args: &[SqlType]) -> Option<FuncSig> {
    use SqlType as T;
    let net = |t: SqlType| is_network(t) || t == T::Unknown;
    let sig = |f: NetFunc, arg_types: &[SqlType], ret: SqlType| {
        Some(FuncSig {
            func: Func::Net(f),
            arg_types: arg_types.to_vec(),
            ret,
        })
    };
    let one = |f: NetFunc, ret: SqlType| match args {
        [t] if net(*t) => sig(f, &[T::Inet], ret),
        _ => None,
    };
    let two = |f: NetFunc, ret: SqlType| match args {
        [a, b] if net(*a) && net(*b) => sig(f, &[T::Inet, T::Inet], ret),
        _ => None,
    };
    match name {
        "host" => one(NetFunc::Host, T::Text),
        "hostmask" => one(NetFunc::Hostmask, T::Inet),
        "masklen" => one(NetFunc::Masklen, T::Int4),
        "netmask" => one(NetFunc::Netmask, T::Inet),
        "network" => one(NetFunc::Network, T::Cidr),
        "broadcast" => one(NetFunc::Broadcast, T::Inet),
        "family" => one(NetFunc::Family, T::Int4),
        "abbrev" => match args {
            [T::Cidr] => sig(NetFunc::Abbrev { cidr: true }, &[T::Cidr], T::Text),
            _ => one(NetFunc::Abbrev { cidr: false }, T::Text),
        },
        "set_masklen" => match args {
            [T::Cidr, _] => sig(
                NetFunc::SetMasklen { cidr: true },
                &[T::Cidr, T::Int4],
                T::Cidr,
            ),
            [a, _] if net(*a) => sig(
                NetFunc::SetMasklen { cidr: false },
                &[T::Inet, T::Int4],
                T::Inet,
            ),
            _ => None,
        },
        "inet_client_addr" | "inet_server_addr" if args.is_empty() => sig(
            NetFunc::ConnAddr {
                server: name == "inet_server_addr",
            },
            &[],
            T::Inet,
        ),
        "inet_client_port" | "inet_server_port" if args.is_empty() => sig(
            NetFunc::ConnPort {
                server: name == "inet_server_port",
            },
            &[],
            T::Int4,
        ),
        "inet_same_family" => two(NetFunc::SameFamily, T::Bool),
        "inet_merge" => two(NetFunc::Merge, T::Cidr),
        _ => None,
    }
}

fn net_arg(v: &Value) -> PgResult<&Inet> {
    match v {
        Value::Inet(a) | Value::Cidr(a) => Ok(a),
        other => Err(PgError::internal(format!(
            "network function got {}",
            other.sql_type().pg_name()
        ))),
    }
}

/// Evaluates a network function (strict: NULL in, NULL out).
pub fn call(f: NetFunc, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    if let NetFunc::ConnAddr { server } | NetFunc::ConnPort { server } = f {
        let (client, srv) = ctx.connection_addrs();
        let Some(a) = (if server { srv } else { client }) else {
            return Ok(Value::Null);
        };
        return Ok(match f {
            NetFunc::ConnAddr { .. } => Value::Inet(Inet::from_ip(a.ip())),
            _ => Value::Int4(a.port() as i32),
        });
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let a = net_arg(&args[0])?;
    let int_arg = |i: usize| args.get(i).and_then(Value::as_i64).unwrap_or(0);
    Ok(match f {
        NetFunc::Host => Value::Text(Arc::from(a.host_text())),
        NetFunc::Hostmask => Value::Inet(a.hostmask()),
        NetFunc::Masklen => Value::Int4(a.bits as i32),
        NetFunc::Netmask => Value::Inet(a.netmask()),
        NetFunc::Network => Value::Cidr(a.network()),
        NetFunc::Broadcast => Value::Inet(a.broadcast()),
        NetFunc::Family => Value::Int4(a.family()),
        NetFunc::SetMasklen { cidr } => {
            let bits = i32::try_from(int_arg(1)).unwrap_or(i32::MAX);
            let v = a.set_masklen(bits, cidr)?;
            if cidr {
                Value::Cidr(v)
            } else {
                Value::Inet(v)
            }
        }
        NetFunc::Abbrev { cidr: true } => Value::Text(Arc::from(a.abbrev_cidr())),
        NetFunc::Abbrev { cidr: false } => Value::Text(Arc::from(Value::Inet(*a).to_text_string())),
        NetFunc::SameFamily => Value::Bool(a.v6 == net_arg(&args[1])?.v6),
        NetFunc::Merge => Value::Cidr(a.merge(net_arg(&args[1])?)?),
        NetFunc::SubnetOf { or_equal } => Value::Bool(a.sub(net_arg(&args[1])?, or_equal)),
        NetFunc::Overlaps => Value::Bool(a.overlaps(net_arg(&args[1])?)),
        NetFunc::Not => Value::Inet(a.not()),
        NetFunc::And => Value::Inet(a.bitop(net_arg(&args[1])?, false)?),
        NetFunc::Or => Value::Inet(a.bitop(net_arg(&args[1])?, true)?),
        NetFunc::AddInt => Value::Inet(a.add(int_arg(1))?),
        NetFunc::SubInt => Value::Inet(a.sub_int(int_arg(1))?),
        NetFunc::Minus => Value::Int8(a.minus(net_arg(&args[1])?)?),
        NetFunc::ConnAddr { .. } | NetFunc::ConnPort { .. } => Value::Null,
    })
}
