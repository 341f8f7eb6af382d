//! Sweeps a folder of OpenAPI documents through the real loader, as `cargo xtask sweep`
//! runs it (in release mode): every `.json`, `.yaml` and `.yml` file under the folder
//! becomes an [`OpenApiSkill`] in an agent of its own, as `omniagent tools list` loads one,
//! and passes when it gives one tool per operation, with unique names of at most 64
//! characters from `[A-Za-z0-9_-]` and an input schema the agent's validator compiled.
//!
//! Operations are counted apart from the loader, from a skeleton of the document (its
//! paths and their method keys), so a loader that lost an operation without a word still
//! fails. Prints how many pass, the time taken, and the reasons of the rest, grouped, most
//! common first.
//!
//! ```text
//! cargo run --release -p skill-openapi --example sweep -- FOLDER
//! ```

// A command-line program: its output is for people.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use skill_core::Agent;
use skill_openapi::{MAX_TOOL_NAME_LEN, OpenApiConfig, OpenApiSkill};

/// The path item keys that are operations (OpenAPI 3.2 adds `query`; 2.0 lacks `trace`).
const METHODS: [&str; 9] = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"];

/// How many groups of reasons are printed.
const SHOWN_GROUPS: usize = 15;

fn main() -> std::process::ExitCode {
    let Some(folder) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: sweep FOLDER");
        return std::process::ExitCode::from(2);
    };
    let mut documents = Vec::new();
    if let Err(error) = find_documents(&folder, &mut documents) {
        eprintln!("sweep: cannot list {}: {error}", folder.display());
        return std::process::ExitCode::from(2);
    }
    documents.sort();
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let outcomes = sweep(&documents, threads);
    report(&folder, &outcomes, started.elapsed(), threads);
    if outcomes.iter().all(|outcome| outcome.problem.is_none()) {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Every JSON and YAML file under `folder`, hidden entries skipped.
fn find_documents(folder: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if entry.file_type()?.is_dir() {
            find_documents(&path, found)?;
        } else if path.extension().is_some_and(|extension| matches!(extension.to_str(), Some("json" | "yaml" | "yml")))
        {
            found.push(path);
        }
    }
    Ok(())
}

/// What one document came to.
struct Outcome {
    path: PathBuf,
    tools: usize,
    /// How many of its tools had parts of their input schema left out.
    with_parts_left_out: usize,
    /// The first thing wrong, if any.
    problem: Option<String>,
}

/// Loads `documents` on `threads` threads, each with a runtime of its own, one document at
/// a time per thread; the outcomes in the order of `documents`.
fn sweep(documents: &[PathBuf], threads: usize) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::with_capacity(documents.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = documents.get(index) else { break };
                    let outcome = runtime.block_on(check(path));
                    outcomes.lock().expect("no sweep thread panicked").push((index, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().expect("no sweep thread panicked");
    outcomes.sort_by_key(|(index, _)| *index);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// Loads the document at `path` as `omniagent tools list` would, and checks its tools.
async fn check(path: &Path) -> Outcome {
    let operations = count_operations(path);
    let agent = Agent::builder().build();
    agent.register(Box::new(OpenApiSkill::new("api", OpenApiConfig::new(path.to_string_lossy()))));
    let report = agent.init_compiled_skills().await;
    let tools = agent.tools();
    let left_out = agent.skipped_tools();
    let with_parts_left_out: HashSet<String> = agent.left_out_keywords().into_iter().map(|part| part.tool).collect();
    agent.close().await;

    let problem = match (operations, report.skipped.first(), left_out.first()) {
        (Err(error), _, _) => Some(format!("cannot count its operations: {error}")),
        (_, Some(failure), _) => Some(format!("skill skipped: {}", failure.reason)),
        (_, _, Some(failure)) => Some(format!("tool left out: {}", failure.reason)),
        (Ok(operations), None, None) => {
            let mut names = HashSet::new();
            let bad_name = tools.iter().map(|tool| tool.source().tool.as_str()).find(|name| {
                let valid = !name.is_empty()
                    && name.len() <= MAX_TOOL_NAME_LEN
                    && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-'));
                !valid || !names.insert(*name)
            });
            match bad_name {
                Some(name) => Some(format!("tool name `{name}` is invalid or used twice")),
                None if tools.len() != operations => Some(format!("{} tools for {operations} operations", tools.len())),
                None => None,
            }
        }
    };
    Outcome { path: path.to_owned(), tools: tools.len(), with_parts_left_out: with_parts_left_out.len(), problem }
}

/// The operations of the document at `path`, counted from its skeleton: the method keys
/// of each path item (and of its `additionalOperations`), nothing else read into memory.
/// A path item given by a `$ref` to another path (`#/paths/~1ip-address`) or to
/// `#/components/pathItems` counts as that one.
fn count_operations(path: &Path) -> Result<usize, String> {
    let bytes = std::fs::read(path).map_err(|error| error.to_string())?;
    let skeleton: Skeleton = match path.extension().and_then(|extension| extension.to_str()) {
        Some("json") => serde_json::from_slice(&bytes).map_err(|error| error.to_string())?,
        _ => serde_yaml_ng::from_slice(&bytes).map_err(|error| error.to_string())?,
    };
    let mut total = 0;
    for (key, item) in &skeleton.paths {
        if key.starts_with("x-") {
            continue;
        }
        total += match &item.reference {
            None => item.operations,
            Some(reference) => {
                let target = match reference.strip_prefix("#/paths/") {
                    Some(path) => skeleton.paths.get(&unescape(path)),
                    None => reference
                        .strip_prefix("#/components/pathItems/")
                        .and_then(|name| skeleton.components.path_items.get(&unescape(name))),
                };
                target
                    .ok_or_else(|| format!("path `{key}` refers to `{reference}`, which the sweep cannot count"))?
                    .operations
            }
        };
    }
    Ok(total)
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[derive(Deserialize)]
struct Skeleton {
    #[serde(default)]
    paths: BTreeMap<String, PathItemOperations>,
    #[serde(default)]
    components: Components,
}

#[derive(Default, Deserialize)]
struct Components {
    #[serde(default, rename = "pathItems")]
    path_items: BTreeMap<String, PathItemOperations>,
}

/// What the sweep reads of a path item: its operations, or the `$ref` it is given by.
/// Anything but an object (a Paths Object's `x-` extension) has none.
struct PathItemOperations {
    operations: usize,
    reference: Option<String>,
}

impl<'de> Deserialize<'de> for PathItemOperations {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = PathItemOperations;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a path item")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut item = PathItemOperations { operations: 0, reference: None };
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "additionalOperations" => {
                            item.operations += map.next_value::<BTreeMap<String, IgnoredAny>>()?.len();
                        }
                        "$ref" => item.reference = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            item.operations += usize::from(METHODS.contains(&key.as_str()));
                        }
                    }
                }
                Ok(item)
            }

            fn visit_str<E: serde::de::Error>(self, _text: &str) -> Result<Self::Value, E> {
                Ok(PathItemOperations { operations: 0, reference: None })
            }
        }
        deserializer.deserialize_any(Keys)
    }
}

fn report(folder: &Path, outcomes: &[Outcome], elapsed: Duration, threads: usize) {
    let passed = outcomes.iter().filter(|outcome| outcome.problem.is_none()).count();
    let tools: usize = outcomes.iter().map(|outcome| outcome.tools).sum();
    let with_parts_left_out: usize = outcomes.iter().map(|outcome| outcome.with_parts_left_out).sum();
    println!(
        "{passed} of {} documents under {} give one valid tool per operation ({tools} tools, \
         {with_parts_left_out} with parts of their input schema left out), in {:.1?} on {threads} threads",
        outcomes.len(),
        folder.display(),
        elapsed,
    );
    let mut groups: BTreeMap<String, Vec<&Outcome>> = BTreeMap::new();
    for outcome in outcomes {
        if let Some(problem) = &outcome.problem {
            groups.entry(reason_kind(problem)).or_default().push(outcome);
        }
    }
    let mut groups: Vec<(String, Vec<&Outcome>)> = groups.into_iter().collect();
    groups.sort_by(|(kind_a, a), (kind_b, b)| b.len().cmp(&a.len()).then_with(|| kind_a.cmp(kind_b)));
    for (kind, members) in groups.iter().take(SHOWN_GROUPS) {
        let example = members[0];
        let shown = example.path.strip_prefix(folder).unwrap_or(&example.path);
        println!("{:>6}  {kind}", members.len());
        println!("        e.g. {}: {}", shown.display(), example.problem.as_deref().unwrap_or_default());
    }
    if groups.len() > SHOWN_GROUPS {
        let rest: usize = groups[SHOWN_GROUPS..].iter().map(|(_, members)| members.len()).sum();
        println!("{rest:>6}  in {} other groups", groups.len() - SHOWN_GROUPS);
    }
}

/// A reason with what differs between documents (quoted names, numbers, paths) blanked
/// out, so that reasons of one kind group together.
fn reason_kind(problem: &str) -> String {
    let mut kind = String::new();
    let mut quote = None;
    for character in problem.chars() {
        match quote {
            Some(closing) if character == closing => {
                kind.push('…');
                kind.push(closing);
                quote = None;
            }
            Some(_) => {}
            None if matches!(character, '`' | '"') => {
                kind.push(character);
                quote = Some(character);
            }
            None if character.is_ascii_digit() => {
                if !kind.ends_with('N') {
                    kind.push('N');
                }
            }
            None => kind.push(character),
        }
    }
    // A path (the document's own, or one inside it) is the first word with a `/`.
    let kind: Vec<&str> = kind.split(' ').map(|word| if word.contains('/') { "…" } else { word }).collect();
    let kind = kind.join(" ");
    match kind.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &kind[..cut]),
        None => kind,
    }
}
