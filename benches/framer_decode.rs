//! Engine front half throughput: the SSE framer alone, framer + decode, and
//! for comparison a generic `serde_json::Value` parse of the same payloads,
//! over 1000 realistic ~300-byte 1.0 JSON-RPC artifactUpdate frames.

use a2a_tap::a2a::decode::decode;
use a2a_tap::sse::{Frame, Framer};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

const FRAMES: usize = 1000;

fn frame(i: usize) -> String {
    format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":\"req-{i:06}\",\"result\":{{\"artifactUpdate\":{{\"taskId\":\"3f2c1a9e-5d4b-4c7a-9e21-7b1f0d6a8c42\",\"contextId\":\"b7e4d2c1-0a9f-4e3b-8c5d-1f2e3a4b5c6d\",\"artifact\":{{\"artifactId\":\"art-{i:04}\",\"name\":\"answer.md\",\"parts\":[{{\"text\":\"chunk {i}: the quick brown fox jumps over the lazy dog\"}}]}},\"append\":true,\"lastChunk\":false}}}}}}\r\n\r\n"
    )
}

fn stream() -> Vec<u8> {
    (0..FRAMES).flat_map(|i| frame(i).into_bytes()).collect()
}

/// The stream cut into 1400-byte pieces (TCP-sized), so some frames split.
fn pieces(s: &[u8]) -> Vec<&[u8]> {
    s.chunks(1400).collect()
}

/// Process CPU time (user + system) from `/proc/self/stat`, in ns; the
/// machine running the benches is shared, so wall time overstates.
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // Fields 14 and 15 of the file are utime and stime; `after` starts at 3.
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) * 10_000_000
}

/// CPU ns per frame of `f` run over all frames, for ~2 s of CPU.
fn cpu_per_frame(name: &str, bytes: usize, mut f: impl FnMut()) {
    let t0 = cpu_ns();
    let mut rounds = 0u64;
    while cpu_ns() - t0 < 2_000_000_000 {
        for _ in 0..50 {
            f();
        }
        rounds += 50;
    }
    let ns = (cpu_ns() - t0) as f64 / (rounds as f64 * FRAMES as f64);
    let mbs = bytes as f64 / (ns * FRAMES as f64) * 1e3;
    eprintln!("cpu-time {name:>28}: {ns:8.1} ns/frame {mbs:8.1} MB/s");
}

fn bench(c: &mut Criterion) {
    let s = stream();
    let ps = pieces(&s);
    let payloads: Vec<Vec<u8>> = {
        let mut f = Framer::new(1 << 20);
        let mut out = Vec::new();
        for p in &ps {
            f.push(p, &mut |fr| {
                if let Frame::Event(e) = fr {
                    out.push(e.data.to_vec());
                }
            });
        }
        out
    };
    assert_eq!(payloads.len(), FRAMES);
    eprintln!(
        "frame size {} bytes (data {} bytes), stream {} bytes",
        s.len() / FRAMES,
        payloads[0].len(),
        s.len()
    );

    if std::env::var_os("ENGINE_CPU_TIME").is_some() {
        cpu_per_frame("framer", s.len(), || {
            let mut f = Framer::new(1 << 20);
            for p in &ps {
                f.push(black_box(p), &mut |fr| {
                    black_box(&fr);
                });
            }
        });
        cpu_per_frame("framer+decode", s.len(), || {
            let mut f = Framer::new(1 << 20);
            for p in &ps {
                f.push(black_box(p), &mut |fr| {
                    if let Frame::Event(e) = fr {
                        let _ = black_box(decode(e.data));
                    }
                });
            }
        });
        cpu_per_frame("decode_only", s.len(), || {
            for p in &payloads {
                let _ = black_box(decode(black_box(p)));
            }
        });
        cpu_per_frame("serde_json_ignored_any_floor", s.len(), || {
            for p in &payloads {
                let _ = black_box(serde_json::from_slice::<serde::de::IgnoredAny>(p));
            }
        });
        cpu_per_frame("serde_json_value_only", s.len(), || {
            for p in &payloads {
                let _ = black_box(serde_json::from_slice::<serde_json::Value>(p));
            }
        });
    }

    let mut g = c.benchmark_group("framer_decode_1000_frames");
    g.throughput(Throughput::Bytes(s.len() as u64));
    g.bench_function("framer", |b| {
        b.iter(|| {
            let mut f = Framer::new(1 << 20);
            let mut n = 0usize;
            for p in &ps {
                f.push(black_box(p), &mut |fr| {
                    if let Frame::Event(e) = fr {
                        n += e.data.len();
                    }
                });
            }
            n
        })
    });
    g.bench_function("framer+decode", |b| {
        b.iter(|| {
            let mut f = Framer::new(1 << 20);
            let mut ok = 0usize;
            for p in &ps {
                f.push(black_box(p), &mut |fr| {
                    if let Frame::Event(e) = fr {
                        ok += usize::from(decode(e.data).is_ok());
                    }
                });
            }
            assert_eq!(ok, FRAMES);
        })
    });
    g.bench_function("decode_only", |b| {
        b.iter(|| {
            for p in &payloads {
                let _ = black_box(decode(black_box(p)));
            }
        })
    });
    g.bench_function("serde_json_ignored_any_floor", |b| {
        b.iter(|| {
            for p in &payloads {
                let _ = black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(
                    p,
                )));
            }
        })
    });
    g.bench_function("serde_json_value_only", |b| {
        b.iter(|| {
            for p in &payloads {
                let _ = black_box(serde_json::from_slice::<serde_json::Value>(black_box(p)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
