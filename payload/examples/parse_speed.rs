//! Throughput of the payload parser beside serde_json on one payload file (a diagnostic, not a
//! benchmark with a budget):
//! `cargo run --release -p fable-payload --example parse_speed -- FILE [ours|serde|copy] [ROUNDS]`.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: parse_speed FILE [ours|serde|copy] [ROUNDS]");
    let bytes = std::fs::read(path).expect("the payload file");
    let rounds: u32 = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(200);
    let modes: Vec<&str> = match args.get(2).map(String::as_str) {
        Some(m) => vec![m],
        None => vec!["copy", "ours", "serde"],
    };
    for mode in modes {
        let t = Instant::now();
        for _ in 0..rounds {
            match mode {
                "ours" => {
                    let v = fable_payload::json::parse_object(bytes.clone());
                    std::hint::black_box(&v);
                }
                "serde" => {
                    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
                    std::hint::black_box(&v);
                }
                _ => {
                    std::hint::black_box(bytes.clone());
                }
            }
        }
        println!(
            "{path}: {mode} {:?} per parse of {} bytes",
            t.elapsed() / rounds,
            bytes.len()
        );
    }
}
