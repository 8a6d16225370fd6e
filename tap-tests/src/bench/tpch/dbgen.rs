//! TPC-H's data generator, in Rust: the eight tables at a scale factor,
//! as COPY text, generated in chunks so the largest table (lineitem,
//! about 750 MB at scale 1) is streamed, never held.
//!
//! Faithful to the spec (TPC-H 3.0, clause 4.2) where the 22 queries
//! look: the cardinalities, keys (orders' sparse keys, partsupp's four
//! suppliers per part and lineitem's supplier among them, only two of
//! three customers with orders), the fixed nation and region lists, the
//! word lists of p_name, p_type, p_container, segments, priorities, ship
//! modes and instructions, the date rules (orderdate in 1992-01-01 ..
//! 1998-08-02, shipdate = orderdate + 1..121 days, commitdate + 30..90,
//! receiptdate = shipdate + 1..30, returnflag and linestatus from 1995-06-17)
//! and the price formulas (p_retailprice from the key, extendedprice =
//! quantity × retailprice, totalprice from its lines). Simplified: the
//! comments are substrings of one pool of sentences built from the spec's
//! grammar words (as dbgen takes substrings of its text pool), and the
//! random numbers come from [`Rng`] (splitmix64), so the values are not
//! dbgen's — the same program and scale always give the same bytes.
//!
//! ```text
//!   Generator::new(table, scale)      one per table (orders + lineitem: one,
//!        │                            since a total price needs its lines)
//!        └── fill(&mut [Vec<u8>]) ──► up to CHUNK bytes of COPY text per call;
//!                                     false once every row is out
//! ```

use std::io::Write as _;

/// Bytes of COPY text per chunk (one CopyData batch).
pub const CHUNK: usize = 1 << 20;

/// The eight tables, in load order.
pub const TABLES: [&str; 8] = [
    "region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];

/// The spec's schema, PostgreSQL types.
pub const SCHEMA: &str = "
CREATE TABLE region (r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152));
CREATE TABLE nation (n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL, n_comment varchar(152));
CREATE TABLE part (p_partkey integer NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL, p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container char(10) NOT NULL, p_retailprice numeric(15,2) NOT NULL, p_comment varchar(23) NOT NULL);
CREATE TABLE supplier (s_suppkey integer NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL, s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal numeric(15,2) NOT NULL, s_comment varchar(101) NOT NULL);
CREATE TABLE partsupp (ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL, ps_supplycost numeric(15,2) NOT NULL, ps_comment varchar(199) NOT NULL);
CREATE TABLE customer (c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL, c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal numeric(15,2) NOT NULL, c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL);
CREATE TABLE orders (o_orderkey integer NOT NULL, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL, o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL, o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL);
CREATE TABLE lineitem (l_orderkey integer NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL, l_linenumber integer NOT NULL, l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL, l_discount numeric(15,2) NOT NULL, l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, l_comment varchar(44) NOT NULL);
";

/// Primary keys, then the foreign-key indexes a user would add.
pub const INDEXES: [&str; 16] = [
    "ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
    "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)",
    "ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
    "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
    "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
    "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
    "CREATE INDEX lineitem_l_partkey_l_suppkey ON lineitem (l_partkey, l_suppkey)",
    "CREATE INDEX lineitem_l_suppkey ON lineitem (l_suppkey)",
    "CREATE INDEX orders_o_custkey ON orders (o_custkey)",
    "CREATE INDEX partsupp_ps_suppkey ON partsupp (ps_suppkey)",
    "CREATE INDEX customer_c_nationkey ON customer (c_nationkey)",
    "CREATE INDEX supplier_s_nationkey ON supplier (s_nationkey)",
    "CREATE INDEX nation_n_regionkey ON nation (n_regionkey)",
    // l_orderkey leads lineitem's primary key; orders' date ranges.
    "CREATE INDEX orders_o_orderdate ON orders (o_orderdate)",
];

/// Rows of `table` at scale `sf` (lineitem: about 4 per order, known only
/// once generated).
pub fn cardinality(table: &str, sf: f64) -> u64 {
    let n = |base: f64| ((base * sf).round() as u64).max(1);
    match table {
        "region" => 5,
        "nation" => 25,
        "part" => n(200_000.0),
        "supplier" => n(10_000.0),
        "partsupp" => 4 * n(200_000.0),
        "customer" => n(150_000.0),
        "orders" => n(1_500_000.0),
        "lineitem" => 4 * n(1_500_000.0),
        _ => 0,
    }
}

/// splitmix64: small, fast, and the same sequence everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (self.next_u64() % span) as i64
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.range(0, items.len() as i64 - 1) as usize]
    }
}

const NATIONS: [(&str, i64); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];

const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];

/// The 92 words of p_name (spec 4.2.3).
const COLORS: [&str; 92] = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
];

const TYPE_1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
const TYPE_2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
const TYPE_3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
const CONTAINER_1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
const CONTAINER_2: [&str; 8] = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
const SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "MACHINERY",
    "HOUSEHOLD",
];
const PRIORITIES: [&str; 5] = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"];
const INSTRUCTIONS: [&str; 4] = [
    "DELIVER IN PERSON",
    "COLLECT COD",
    "NONE",
    "TAKE BACK RETURN",
];
const MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];

// The comment grammar's words (spec 4.2.2.10).
const NOUNS: [&str; 40] = [
    "foxes",
    "ideas",
    "theodolites",
    "pinto beans",
    "instructions",
    "dependencies",
    "excuses",
    "platelets",
    "asymptotes",
    "courts",
    "dolphins",
    "multipliers",
    "sauternes",
    "warthogs",
    "frets",
    "dinos",
    "attainments",
    "somas",
    "Tiresias",
    "patterns",
    "forges",
    "braids",
    "hockey players",
    "frays",
    "warhorses",
    "dugouts",
    "notornis",
    "epitaphs",
    "pearls",
    "tithes",
    "waters",
    "orbits",
    "gifts",
    "sheaves",
    "depths",
    "sentiments",
    "packages",
    "requests",
    "accounts",
    "deposits",
];
const VERBS: [&str; 20] = [
    "sleep",
    "wake",
    "are",
    "cajole",
    "haggle",
    "nag",
    "use",
    "boost",
    "affix",
    "detect",
    "integrate",
    "maintain",
    "nod",
    "was",
    "lose",
    "sublate",
    "solve",
    "thrash",
    "promise",
    "engage",
];
const ADJECTIVES: [&str; 20] = [
    "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe", "quick",
    "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring", "bold", "final",
    "ironic",
];
const ADVERBS: [&str; 16] = [
    "sometimes",
    "always",
    "never",
    "furiously",
    "slyly",
    "carefully",
    "blithely",
    "quickly",
    "fluffily",
    "slowly",
    "quietly",
    "ruthlessly",
    "thinly",
    "closely",
    "regularly",
    "finally",
];
const PREPOSITIONS: [&str; 12] = [
    "about", "above", "across", "after", "against", "along", "among", "around", "at", "before",
    "beside", "of",
];
const TERMINATORS: [&str; 5] = [".", ";", ":", "!", "--"];

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of `days` since 1970-01-01, written to `out`.
fn write_date(out: &mut Vec<u8>, days: i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
}

/// A numeric(15,2) from hundredths.
fn write_money(out: &mut Vec<u8>, cents: i64) {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.abs();
    let _ = write!(out, "{sign}{}.{:02}", a / 100, a % 100);
}

/// The spec's p_retailprice of `partkey`, in hundredths.
pub fn retail_cents(partkey: i64) -> i64 {
    90_000 + (partkey / 10) % 20_001 + 100 * (partkey % 1000)
}

/// The `i`-th (0..4) supplier of `partkey` among `suppliers` (spec 4.2.3).
pub fn part_supplier(partkey: i64, i: i64, suppliers: i64) -> i64 {
    (partkey + i * (suppliers / 4 + (partkey - 1) / suppliers)) % suppliers + 1
}

/// The `i`-th (1-based) order's key: 8 used of every 32 (the spec's sparse keys).
fn order_key(i: i64) -> i64 {
    ((i - 1) / 8) * 32 + (i - 1) % 8 + 1
}

/// The pool of grammar text every comment is a substring of.
struct TextPool(String);

impl TextPool {
    const SIZE: usize = 1 << 20;

    fn new() -> TextPool {
        let mut rng = Rng::new(0x7E47);
        let mut s = String::with_capacity(Self::SIZE + 200);
        while s.len() < Self::SIZE {
            // sentence: [adverb|adjective] noun verb [adverb] [prep the adj noun] terminator
            match rng.range(0, 2) {
                0 => {
                    s.push_str(rng.pick(&ADJECTIVES));
                    s.push(' ');
                }
                1 => {
                    s.push_str(rng.pick(&ADVERBS));
                    s.push(' ');
                }
                _ => {}
            }
            s.push_str(rng.pick(&NOUNS));
            s.push(' ');
            s.push_str(rng.pick(&VERBS));
            if rng.range(0, 1) == 0 {
                s.push(' ');
                s.push_str(rng.pick(&ADVERBS));
            }
            if rng.range(0, 1) == 0 {
                s.push(' ');
                s.push_str(rng.pick(&PREPOSITIONS));
                s.push_str(" the ");
                s.push_str(rng.pick(&ADJECTIVES));
                s.push(' ');
                s.push_str(rng.pick(&NOUNS));
            }
            s.push_str(rng.pick(&TERMINATORS));
            s.push(' ');
        }
        TextPool(s)
    }

    /// A comment of `lo..=hi` characters from the pool.
    fn comment(&self, rng: &mut Rng, lo: i64, hi: i64) -> &str {
        let len = rng.range(lo, hi) as usize;
        let off = rng.range(0, (self.0.len() - len - 1) as i64) as usize;
        &self.0[off..off + len]
    }
}

/// A random string of `lo..=hi` address characters.
fn write_vstring(out: &mut Vec<u8>, rng: &mut Rng, lo: i64, hi: i64) {
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789, ";
    let len = rng.range(lo, hi);
    for _ in 0..len {
        out.push(ALPHA[rng.range(0, ALPHA.len() as i64 - 1) as usize]);
    }
}

/// `CC-ddd-ddd-dddd` with the nation's country code (nationkey + 10).
fn write_phone(out: &mut Vec<u8>, rng: &mut Rng, nation: i64) {
    let _ = write!(
        out,
        "{}-{}-{}-{}",
        nation + 10,
        rng.range(100, 999),
        rng.range(100, 999),
        rng.range(1000, 9999)
    );
}

/// Generates one table (or orders and lineitem together) chunk by chunk.
pub struct Generator {
    table: &'static str,
    sf: f64,
    rng: Rng,
    pool: TextPool,
    /// Next row (1-based key index).
    next: i64,
    /// Rows in all (orders for the orders + lineitem generator).
    rows: i64,
    suppliers: i64,
    parts: i64,
    customers: i64,
}

impl Generator {
    /// The generator of `table` ("orders" yields orders and lineitem).
    pub fn new(table: &'static str, sf: f64) -> Generator {
        let seed = TABLES.iter().position(|t| *t == table).unwrap_or(0) as u64;
        Generator {
            table,
            sf,
            rng: Rng::new(0x79C8_0000 + seed),
            pool: TextPool::new(),
            next: 1,
            rows: cardinality(if table == "partsupp" { "part" } else { table }, sf) as i64,
            suppliers: cardinality("supplier", sf) as i64,
            parts: cardinality("part", sf) as i64,
            customers: cardinality("customer", sf) as i64,
        }
    }

    /// Appends rows to `out[0]` (and lineitem's to `out[1]` for orders)
    /// until `out[0]` holds [`CHUNK`] bytes or the table ends; false when
    /// there was nothing left.
    pub fn fill(&mut self, out: &mut [Vec<u8>]) -> bool {
        if self.next > self.rows {
            return false;
        }
        while self.next <= self.rows && out[0].len() < CHUNK {
            let k = self.next;
            self.next += 1;
            match self.table {
                "region" => self.region(k, &mut out[0]),
                "nation" => self.nation(k, &mut out[0]),
                "part" => self.part(k, &mut out[0]),
                "supplier" => self.supplier(k, &mut out[0]),
                "partsupp" => self.partsupp(k, &mut out[0]),
                "customer" => self.customer(k, &mut out[0]),
                "orders" => {
                    let (o, l) = out.split_at_mut(1);
                    self.order(k, &mut o[0], &mut l[0]);
                }
                _ => return false,
            }
        }
        true
    }

    fn region(&mut self, k: i64, out: &mut Vec<u8>) {
        let c = self.pool.comment(&mut self.rng, 31, 115);
        let _ = writeln!(out, "{}\t{}\t{}", k - 1, REGIONS[(k - 1) as usize], c);
    }

    fn nation(&mut self, k: i64, out: &mut Vec<u8>) {
        let (name, region) = NATIONS[(k - 1) as usize];
        let c = self.pool.comment(&mut self.rng, 31, 114);
        let _ = writeln!(out, "{}\t{name}\t{region}\t{c}", k - 1);
    }

    fn part(&mut self, k: i64, out: &mut Vec<u8>) {
        let _ = write!(out, "{k}\t");
        // Five distinct colours.
        let mut chosen: [usize; 5] = [usize::MAX; 5];
        let mut n = 0;
        while n < 5 {
            let c = self.rng.range(0, COLORS.len() as i64 - 1) as usize;
            if !chosen[..n].contains(&c) {
                chosen[n] = c;
                n += 1;
            }
        }
        for (i, c) in chosen.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(COLORS[*c].as_bytes());
        }
        let m = self.rng.range(1, 5);
        let b = self.rng.range(1, 5);
        let t1 = self.rng.pick(&TYPE_1);
        let t2 = self.rng.pick(&TYPE_2);
        let t3 = self.rng.pick(&TYPE_3);
        let size = self.rng.range(1, 50);
        let c1 = self.rng.pick(&CONTAINER_1);
        let c2 = self.rng.pick(&CONTAINER_2);
        let _ = write!(
            out,
            "\tManufacturer#{m}\tBrand#{m}{b}\t{t1} {t2} {t3}\t{size}\t{c1} {c2}\t"
        );
        write_money(out, retail_cents(k));
        let c = self.pool.comment(&mut self.rng, 5, 22);
        let _ = writeln!(out, "\t{c}");
    }

    fn supplier(&mut self, k: i64, out: &mut Vec<u8>) {
        let nation = self.rng.range(0, 24);
        let _ = write!(out, "{k}\tSupplier#{k:09}\t");
        write_vstring(out, &mut self.rng, 10, 40);
        let _ = write!(out, "\t{nation}\t");
        write_phone(out, &mut self.rng, nation);
        out.push(b'\t');
        write_money(out, self.rng.range(-99_999, 999_999));
        out.push(b'\t');
        // The spec puts "Customer … Complaints" in 5 of every 10,000
        // suppliers' comments and "Customer … Recommends" in 5 more (Q16);
        // one in 500 each here, so small scales have some too.
        let a = self.pool.comment(&mut self.rng, 10, 30).to_string();
        let b = self.pool.comment(&mut self.rng, 5, 20).to_string();
        let text = match k % 500 {
            7 => format!("{a}Customer {b}Complaints"),
            257 => format!("{a}Customer {b}Recommends"),
            _ => self.pool.comment(&mut self.rng, 25, 100).to_string(),
        };
        let _ = writeln!(out, "{text}");
    }

    /// Row `k` of partsupp's generator is part `k`'s four rows.
    fn partsupp(&mut self, k: i64, out: &mut Vec<u8>) {
        for i in 0..4 {
            let s = part_supplier(k, i, self.suppliers);
            let qty = self.rng.range(1, 9999);
            let _ = write!(out, "{k}\t{s}\t{qty}\t");
            write_money(out, self.rng.range(100, 100_000));
            let c = self.pool.comment(&mut self.rng, 49, 198);
            let _ = writeln!(out, "\t{c}");
        }
    }

    fn customer(&mut self, k: i64, out: &mut Vec<u8>) {
        let nation = self.rng.range(0, 24);
        let _ = write!(out, "{k}\tCustomer#{k:09}\t");
        write_vstring(out, &mut self.rng, 10, 40);
        let _ = write!(out, "\t{nation}\t");
        write_phone(out, &mut self.rng, nation);
        out.push(b'\t');
        write_money(out, self.rng.range(-99_999, 999_999));
        let seg = self.rng.pick(&SEGMENTS);
        let c = self.pool.comment(&mut self.rng, 29, 116);
        let _ = writeln!(out, "\t{seg}\t{c}");
    }

    /// Order `i` (1-based) and its 1..7 lines.
    fn order(&mut self, i: i64, orders: &mut Vec<u8>, lines: &mut Vec<u8>) {
        let start = days_from_civil(1992, 1, 1);
        let end = days_from_civil(1998, 12, 31);
        let current = days_from_civil(1995, 6, 17);
        let key = order_key(i);
        // Customers whose key is a multiple of 3 place no orders (spec).
        let cust = loop {
            let c = self.rng.range(1, self.customers);
            if c % 3 != 0 || self.customers < 3 {
                break c;
            }
        };
        let odate = self.rng.range(start, end - 151);
        let nlines = self.rng.range(1, 7);
        let mut total: i128 = 0; // in 1e-6 units: cents × (1+tax) × (1-disc)
        let mut f_lines = 0;
        for ln in 1..=nlines {
            let part = self.rng.range(1, self.parts);
            let supp = part_supplier(part, self.rng.range(0, 3), self.suppliers);
            let qty = self.rng.range(1, 50);
            let disc = self.rng.range(0, 10);
            let tax = self.rng.range(0, 8);
            let price = qty * retail_cents(part);
            let ship = odate + self.rng.range(1, 121);
            let commit = odate + self.rng.range(30, 90);
            let receipt = ship + self.rng.range(1, 30);
            let rflag = if receipt <= current {
                if self.rng.range(0, 1) == 0 {
                    "R"
                } else {
                    "A"
                }
            } else {
                "N"
            };
            let lstatus = if ship > current { "O" } else { "F" };
            if lstatus == "F" {
                f_lines += 1;
            }
            total += i128::from(price) * i128::from(100 + tax) * i128::from(100 - disc);
            let instr = self.rng.pick(&INSTRUCTIONS);
            let mode = self.rng.pick(&MODES);
            let _ = write!(lines, "{key}\t{part}\t{supp}\t{ln}\t{qty}.00\t");
            write_money(lines, price);
            let _ = write!(lines, "\t0.{disc:02}\t0.{tax:02}\t{rflag}\t{lstatus}\t");
            write_date(lines, ship);
            lines.push(b'\t');
            write_date(lines, commit);
            lines.push(b'\t');
            write_date(lines, receipt);
            let c = self.pool.comment(&mut self.rng, 10, 43);
            let _ = writeln!(lines, "\t{instr}\t{mode}\t{c}");
        }
        let status = if f_lines == nlines {
            "F"
        } else if f_lines == 0 {
            "O"
        } else {
            "P"
        };
        // Round the sum of exact line amounts to cents, half up.
        let cents = ((total + 5_000) / 10_000) as i64;
        let prio = self.rng.pick(&PRIORITIES);
        let clerk_max = ((1000.0 * self.sf).round() as i64).max(1);
        let clerk = self.rng.range(1, clerk_max);
        let _ = write!(orders, "{key}\t{cust}\t{status}\t");
        write_money(orders, cents);
        orders.push(b'\t');
        write_date(orders, odate);
        let c = self.pool.comment(&mut self.rng, 19, 78);
        let _ = writeln!(orders, "\t{prio}\tClerk#{clerk:09}\t0\t{c}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(table: &'static str, sf: f64) -> (String, String) {
        let mut g = Generator::new(table, sf);
        let mut out = vec![Vec::new(), Vec::new()];
        let mut a = Vec::new();
        let mut b = Vec::new();
        while g.fill(&mut out) {
            a.append(&mut out[0]);
            b.append(&mut out[1]);
        }
        (
            String::from_utf8(a).expect("utf8"),
            String::from_utf8(b).expect("utf8"),
        )
    }

    #[test]
    fn dates_round_trip() {
        let mut v = Vec::new();
        write_date(&mut v, days_from_civil(1998, 12, 31));
        assert_eq!(v, b"1998-12-31", "date text");
        let mut v = Vec::new();
        write_date(&mut v, days_from_civil(1992, 2, 29) + 1);
        assert_eq!(v, b"1992-03-01", "leap day");
    }

    #[test]
    fn tables_have_the_spec_shape() {
        let sf = 0.01;
        let (parts, _) = all("part", sf);
        assert_eq!(parts.lines().count(), 2000, "parts");
        assert!(parts.contains("forest"), "a forest part");
        let (ps, _) = all("partsupp", sf);
        assert_eq!(ps.lines().count(), 8000, "partsupp rows");
        let (orders, lines) = all("orders", sf);
        assert_eq!(orders.lines().count(), 15000, "orders");
        let n = lines.lines().count();
        assert!((45_000..75_000).contains(&n), "about 4 lines per order");
        assert!(
            orders.lines().any(|l| {
                let c = l.rsplit('\t').next().unwrap_or("");
                c.find("special")
                    .is_some_and(|i| c[i..].contains("requests"))
            }),
            "some orders match %special%requests%"
        );
        for l in lines.lines().take(100) {
            assert_eq!(l.split('\t').count(), 16, "lineitem columns");
        }
        let (a, _) = all("orders", sf);
        assert_eq!(a, orders, "deterministic");
    }
}
