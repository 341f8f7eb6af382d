//! The benchmarks' rule for the figures they print beside criterion's.

/// Whether a benchmark's figure named `name`, measured outside criterion and printed
/// beside its report, is wanted: under `cargo bench` only (not when `cargo test
/// --benches` runs each benchmark once), and unless a filter leaves it out.
pub fn printed_figure_wanted(name: &str) -> bool {
    figure_wanted(std::env::args().skip(1), name)
}

fn figure_wanted(args: impl Iterator<Item = String>, name: &str) -> bool {
    let args: Vec<String> = args.collect();
    let filters: Vec<&String> = args.iter().filter(|arg| !arg.starts_with('-')).collect();
    args.iter().any(|arg| arg == "--bench") && (filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
}

#[cfg(test)]
mod tests {
    use super::figure_wanted;

    fn wanted(args: &[&str]) -> bool {
        figure_wanted(args.iter().map(|arg| (*arg).to_owned()), "call_sequential/paired")
    }

    #[test]
    fn a_figure_is_printed_under_cargo_bench_unless_a_filter_leaves_it_out() {
        assert!(wanted(&["--bench"]));
        assert!(wanted(&["--bench", "paired"]));
        assert!(!wanted(&["--bench", "startup"]));
        assert!(!wanted(&[]), "cargo test --benches runs each benchmark once, without --bench");
    }
}
