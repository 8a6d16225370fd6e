//! Micro-benchmark of masked row decoding: TPC-H lineitem-shaped rows
//! decoded as Q6's scan does (columns 4, 6, 10 for the filter, then 5),
//! with `decode_row_needed` and with a `RowLayout`.
//!
//! `cargo run --release -p storage --example decode_bench [rows]`

use std::time::Instant;

use pgtypes::numeric::Numeric;
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use storage::rowcodec::{decode_row_layout, decode_row_needed, encode_row, NoToast, RowLayout};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let types = [
        SqlType::Int4,
        SqlType::Int4,
        SqlType::Int4,
        SqlType::Int4,
        SqlType::NUMERIC,
        SqlType::NUMERIC,
        SqlType::NUMERIC,
        SqlType::NUMERIC,
        SqlType::Char(1),
        SqlType::Char(1),
        SqlType::Date,
        SqlType::Date,
        SqlType::Date,
        SqlType::Char(25),
        SqlType::Char(10),
        SqlType::Varchar(Some(44)),
    ];
    let mut rows = Vec::with_capacity(n);
    let mut seed = 12345u64;
    let mut rnd = |m: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    for i in 0..n {
        let num = |m: i128, s: u16| Value::Numeric(Numeric::new(m, s).unwrap());
        let vals = vec![
            Value::Int4(i as i32 / 4),
            Value::Int4(rnd(200_000) as i32),
            Value::Int4(rnd(10_000) as i32),
            Value::Int4((i % 7) as i32),
            num(rnd(50) as i128 + 1, 2),
            num(rnd(10_000_000) as i128, 2),
            num(rnd(11) as i128, 2),
            num(rnd(9) as i128, 2),
            Value::text("N"),
            Value::text("O"),
            Value::Date(rnd(2500) as i32),
            Value::Date(rnd(2500) as i32),
            Value::Date(rnd(2500) as i32),
            Value::text("DELIVER IN PERSON        "),
            Value::text("TRUCK     "),
            Value::text(&"furiously regular ideas"[..(rnd(20) as usize + 3)]),
        ];
        let mut buf = Vec::new();
        encode_row(&vals, &mut buf);
        rows.push(buf);
    }
    let mut filter = [false; 16];
    for c in [4, 6, 10] {
        filter[c] = true;
    }
    let mut rest = [false; 16];
    rest[5] = true;
    // Q6's filter reads the three columns (as the executor would, from
    // the row just written).
    let pass = |row: &[Value]| {
        matches!(row[10], Value::Date(d) if d < 1200)
            && matches!(row[6], Value::Numeric(n) if (5..=7).contains(&n.mantissa()))
            && matches!(row[4], Value::Numeric(n) if n.mantissa() < 2400)
    };

    for round in 0..3 {
        let t = Instant::now();
        let mut out = Vec::new();
        let mut hits = 0;
        for r in &rows {
            decode_row_needed(r, &types, Some(&filter), &mut out, &NoToast).unwrap();
            if pass(&out) {
                decode_row_needed(r, &types, Some(&rest), &mut out, &NoToast).unwrap();
                hits += 1;
            }
        }
        let a = t.elapsed();
        let (lf, lr) = (
            RowLayout::new(&types, Some(&filter)),
            RowLayout::new(&types, Some(&rest)),
        );
        let t = Instant::now();
        let mut out2 = Vec::new();
        let mut hits2 = 0;
        for r in &rows {
            decode_row_layout(r, &lf, &mut out2, &NoToast).unwrap();
            if pass(&out2) {
                decode_row_layout(r, &lr, &mut out2, &NoToast).unwrap();
                hits2 += 1;
            }
        }
        let b = t.elapsed();
        assert_eq!((hits, &out), (hits2, &out2));
        println!(
            "round {round}: needed {:.1} ns/row, layout {:.1} ns/row ({hits} passed)",
            a.as_nanos() as f64 / n as f64,
            b.as_nanos() as f64 / n as f64
        );
    }
}
