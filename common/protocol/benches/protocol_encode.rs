//! Protocol encode hot path: one DataRow (int4, text, int8, NULL) written
//! straight into a reused output buffer, as the session loop's ResultSink
//! does per row. Shows the per-row cost and that nothing is allocated per
//! row once the buffer has grown (the buffer is cleared, not reallocated).

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pgtypes::value::Value;
use protocol::messages::{write_command_complete, DataRowWriter};

fn data_row(c: &mut Criterion) {
    let row = [
        Value::Int4(42),
        Value::text("some text value of moderate length"),
        Value::Int8(-1234567890123),
        Value::Null,
    ];
    let mut out = BytesMut::with_capacity(64 * 1024);
    c.bench_function("data_row_text_4_columns", |b| {
        b.iter(|| {
            if out.len() > 60 * 1024 {
                out.clear();
            }
            let mut w = DataRowWriter::begin(&mut out, row.len()).unwrap();
            for v in black_box(&row) {
                if matches!(v, Value::Null) {
                    w.null();
                } else {
                    let _ = w.value_with::<()>(|b| {
                        v.write_text(b);
                        Ok(())
                    });
                }
            }
            w.finish().unwrap();
        })
    });
    c.bench_function("command_complete", |b| {
        b.iter(|| {
            if out.len() > 60 * 1024 {
                out.clear();
            }
            write_command_complete(&mut out, black_box("SELECT 1")).unwrap();
        })
    });
}

criterion_group!(benches, data_row);
criterion_main!(benches);
