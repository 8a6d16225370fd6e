use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
#[test]
fn dump() {
    for q in [
        "select a[1], a[1:2], x = any(a), x <> all(a), array[1,2], interval '1 day', interval '1' day",
        "select extract(year from d), date_part('year', d), s ~ 'a', s !~* 'b', s similar to 'a%' escape '#', s like 'a' escape '#'",
        "select string_agg(x, ',' order by x) filter (where x > 1), count(*) filter (where y), array(select 1)",
        "select substring(s from 'a.c'), substring(s from 2 for 3), position('a' in s), overlay(s placing 'x' from 2), '{1}'::int[], x::int[], trim(both 'x' from s)",
    ] {
        let s = Parser::parse_sql(&PostgreSqlDialect {}, q);
        println!("{q}\n{:#?}", s);
    }
}
