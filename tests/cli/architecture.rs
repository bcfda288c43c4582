//! The shape ARCHITECTURE.md describes, checked: lower layers import nothing above them, and a
//! source file over 600 lines says in its opening comment why it is one file.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The workspace's source folders: latlab's own crate, then the crates below it.
fn roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        root.join("src"),
        root.join("crates/core/src"),
        root.join("crates/emulator/src"),
    ]
}

/// Every Rust source file of the workspace's crates.
fn all_rust_files() -> Vec<PathBuf> {
    roots().iter().flat_map(|r| rust_files(r)).collect()
}

/// A file of tests only (`tests.rs`, `..._tests.rs`, declared under `#[cfg(test)]`), which may
/// borrow fixtures from anywhere.
fn is_tests_file(f: &Path) -> bool {
    f.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with("tests.rs"))
}

/// Lines of code (not comments) in `files` that name one of `above`.
fn imports_of(files: &[PathBuf], above: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !is_tests_file(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        // A file's tests (its `#[cfg(test)]` module, last by convention) may borrow fixtures.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for module in above {
                if line.contains(&format!("crate::{module}::"))
                    || line.contains(&format!("crate::{module};"))
                    || line.contains(&format!("crate::{module}}}"))
                {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn lower_layers_import_nothing_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut base = rust_files(&src.join("metrics"));
    base.extend(rust_files(&src.join("lab_kit/section")));
    let upward = imports_of(
        &base,
        &["labs", "run", "tui", "report", "scenario", "cli", "aws"],
    );
    assert!(
        upward.is_empty(),
        "metrics and report sections' base import from above: {upward:#?}"
    );
    // The kit a lab is written against is below every lab.
    let kit = imports_of(
        &rust_files(&src.join("lab_kit")),
        &[
            "labs", "run", "tui", "report", "scenario", "cli", "snapshot",
        ],
    );
    assert!(kit.is_empty(), "the lab kit imports from above: {kit:#?}");
    let labs = imports_of(
        &rust_files(&src.join("labs")),
        &["run", "tui", "report", "scenario", "cli"],
    );
    assert!(
        labs.is_empty(),
        "a lab imports the run, the screen, the reports or the scenario file: {labs:#?}"
    );
    let report = imports_of(&rust_files(&src.join("report")), &["tui", "cli"]);
    assert!(report.is_empty(), "reports import the screen: {report:#?}");
}

/// The emulator and the shared primitives are crates below latlab's own: the compiler refuses an
/// import from above (a crate cannot name its dependents), so what is left to check is that the
/// manifests keep the order: latlab-core depends on no latlab crate, latlab-emulator on
/// latlab-core alone, and latlab on both.
#[test]
fn the_crates_below_latlab_depend_only_downward() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let latlab_deps = |manifest: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        let deps = text.split("[dependencies]").nth(1).unwrap_or_default();
        let deps = deps.split("\n[").next().unwrap_or_default();
        deps.lines()
            .filter_map(|l| l.split(['.', ' ', '=']).next())
            .filter(|name| name.starts_with("latlab"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(latlab_deps("crates/core/Cargo.toml"), Vec::<String>::new());
    assert_eq!(latlab_deps("crates/emulator/Cargo.toml"), ["latlab-core"]);
    assert_eq!(
        latlab_deps("Cargo.toml"),
        ["latlab-core", "latlab-emulator"]
    );
}

/// The emulator's tests are a package of their own (`crates/emulator/tests/Cargo.toml`), so they
/// build unoptimized while the emulator stays optimized; neither package finds a test by its
/// place (`autotests = false`), so each test binary in the folder must be listed there, or it
/// would never build nor run. This names any that is not.
#[test]
fn every_test_of_the_emulator_is_a_target_of_its_tests_package() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/emulator/tests");
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap()).unwrap();
    let listed: Vec<String> = manifest
        .get("test")
        .and_then(toml::Value::as_array)
        .map(|tests| {
            tests
                .iter()
                .filter_map(|t| t.get("path").and_then(toml::Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut binaries = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && path.join("main.rs").is_file() {
            binaries.push(format!("{name}/main.rs"));
        } else if name.ends_with(".rs") {
            binaries.push(name);
        }
    }
    assert!(!binaries.is_empty(), "no test in {}", dir.display());
    let unlisted: Vec<&String> = binaries.iter().filter(|b| !listed.contains(b)).collect();
    assert!(
        unlisted.is_empty(),
        "test binaries in crates/emulator/tests/ that its Cargo.toml does not list as a [[test]] \
         (they would never run): {unlisted:?}"
    );
}

/// Doc tests are off in every crate (`doctest = false`: none had an example, and rustdoc spent
/// most of a minute of each CI run finding that out). An example written in a doc comment would
/// then never run; this names it, so the crate's doc tests are turned back on with it.
#[test]
fn no_doc_example_is_written_while_doc_tests_are_off() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for src in roots() {
        let text = std::fs::read_to_string(src.parent().unwrap().join("Cargo.toml")).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        let off = value
            .get("lib")
            .and_then(|l| l.get("doctest"))
            .and_then(toml::Value::as_bool)
            == Some(false);
        if !off {
            continue;
        }
        for file in rust_files(&src) {
            let body = std::fs::read_to_string(&file).unwrap();
            for (i, line) in body.lines().enumerate() {
                let t = line.trim_start();
                let doc = t.starts_with("///") || t.starts_with("//!");
                let example = doc && (t.contains("```") || t.contains("~~~"));
                let included =
                    t.starts_with("#") && t.contains("doc") && t.contains("include_str!");
                if example || included {
                    found.push(format!(
                        "{}:{}: {}",
                        file.strip_prefix(root).unwrap().display(),
                        i + 1,
                        t
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "doc examples in a crate whose doc tests are off (`doctest = false` in its Cargo.toml's \
         [lib]): they would never run. Remove `doctest = false` from that crate and add \
         `cargo test --doc` back to scripts/run-tests' work, or move the example into a test:\n{}",
        found.join("\n")
    );
}

/// The labs also run against real AWS, where no emulator exists: what they, the screen, the
/// reports, the cost and the faults share with the emulator is the services' vocabulary
/// (`src/services/`), which the emulator imports too, never the other way round.
#[test]
fn only_the_run_and_the_commands_reach_the_emulator() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for dir in ["labs", "tui", "report", "lab_kit"] {
        let found = imports_of(&rust_files(&src.join(dir)), &["emulator"]);
        assert!(found.is_empty(), "{dir}/ imports the emulator: {found:#?}");
    }
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src");
    let services = rust_files(&core.join("services"));
    assert!(
        !services.is_empty(),
        "crates/core/src/services/ holds the services' vocabulary"
    );
    let modules: Vec<String> = std::fs::read_dir(&core)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|m| m != "services" && m != "lib")
        .collect();
    assert!(modules.iter().any(|m| m == "faults"), "{modules:?}");
    let modules: Vec<&str> = modules.iter().map(String::as_str).collect();
    let found = imports_of(&services, &modules);
    assert!(
        found.is_empty(),
        "the services' vocabulary imports the other shared primitives: {found:#?}"
    );
}

#[test]
fn a_long_source_file_says_why_it_is_one_file() {
    let mut long = Vec::new();
    for f in all_rust_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines = text.lines().count();
        let opening: String = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        if lines > 600 && !opening.contains("One file, though long") {
            long.push(format!("{} ({lines} lines)", f.display()));
        }
    }
    assert!(
        long.is_empty(),
        "over 600 lines without saying why in the opening comment: {long:?}"
    );
}

/// The modules latlab's own code names, for each top-level module: `crate::NAME` outside comments
/// and tests (a `#[cfg(test)]` module, or a `tests.rs` file, may borrow a fixture from anywhere).
fn module_graph(
    src: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let modules: Vec<String> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph = std::collections::BTreeMap::new();
    for module in &modules {
        let dir = src.join(module);
        let files = if dir.is_dir() {
            rust_files(&dir)
        } else {
            vec![src.join(format!("{module}.rs"))]
        };
        let mut uses = std::collections::BTreeSet::new();
        for f in files.iter().filter(|f| !is_tests_file(f)) {
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let name: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if &name != module && modules.contains(&name) {
                        uses.insert(name);
                    }
                }
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// A circle of imports (run -> report -> run) means neither module can be understood, tested or
/// changed alone: the modules form a hierarchy, and this finds any circle with its path.
#[test]
fn no_circle_between_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut graph = module_graph(&root.join("src"));
    assert!(
        graph["labs"].contains("lab_kit") && graph["record"].contains("run"),
        "{graph:#?}"
    );
    let core = module_graph(&root.join("crates/core/src"));
    assert!(core["faults"].contains("services"), "{core:#?}");
    graph.extend(core.into_iter().map(|(m, uses)| {
        (
            format!("core::{m}"),
            uses.into_iter().map(|u| format!("core::{u}")).collect(),
        )
    }));
    // Depth-first search; a module met again on the current path closes a circle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut std::collections::BTreeSet<&'a str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            circles.push(format!("{} -> {m}", path[at..].join(" -> ")));
            return;
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for next in &graph[m] {
            visit(next, graph, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "modules import each other in a circle: {circles:#?}"
    );
}

/// Lines of production code (not comments, not tests) outside the labs' folders, the emulator,
/// the services' vocabulary and the faults that name a lab: its module (`labs::kinesis`), its
/// registry variant (`LabKind::Redis`), its key as a string (`"s3"`), or its part of a run's
/// snapshot, scenario or history (`.sqs`). Everything else learns of the labs through the
/// registry (`labs::for_each_lab`).
fn lab_names_outside_the_labs() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let labs: Vec<String> = std::fs::read_dir(src.join("labs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .filter_map(|p| Some(p.file_name()?.to_str()?.to_string()))
        .collect();
    assert!(labs.len() >= 4, "{labs:?}");
    let kinds: Vec<String> = labs
        .iter()
        .map(|l| {
            let mut c = l.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed = [
        "src/labs",
        "crates/emulator/src",
        "crates/core/src/services",
        "crates/core/src/faults",
    ]
    .map(|d| root.join(d));
    let mut found = Vec::new();
    for f in all_rust_files()
        .iter()
        .filter(|f| !allowed.iter().any(|a| f.starts_with(a)) && !is_tests_file(f))
    {
        // A production file's own test module counts too, by the lab modules and kinds it
        // reaches for (a lab's tests live in its folder); its data may hold a lab's key.
        let text = std::fs::read_to_string(f).unwrap();
        let code_lines = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .count();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if i >= code_lines {
                let reaches = labs.iter().any(|l| line.contains(&format!("labs::{l}")))
                    || kinds
                        .iter()
                        .any(|k| line.contains(&format!("LabKind::{k}")));
                if reaches {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
                continue;
            }
            let names = labs.iter().any(|l| {
                line.contains(&format!("labs::{l}"))
                    || line.contains(&format!("\"{l}\""))
                    || line.match_indices(&format!(".{l}")).any(|(at, m)| {
                        !line[at + m.len()..]
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '(')
                    })
            }) || kinds
                .iter()
                .any(|k| line.contains(&format!("LabKind::{k}")));
            if names {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn no_file_outside_the_labs_names_a_lab() {
    let found = lab_names_outside_the_labs();
    assert!(
        found.is_empty(),
        "{} lines outside src/labs, the emulator crate, and the services and faults of crates/core name a lab: {found:#?}",
        found.len()
    );
}

#[test]
fn no_source_file_is_over_700_lines() {
    let long: Vec<String> = all_rust_files()
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 700).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over 700 lines: {long:?}");
}

/// Lines of production code in the emulator outside a service's folder that name an emulated
/// service, apart from the registry (`service.rs`'s list and `lib.rs`'s `pub mod` lines): a
/// service is one folder, and the dispatch, limits, profiles, faults and stats are built from the
/// registry. The services are those of `crates/core/src/services/`; a service's folder is one
/// that implements `service::Service`.
#[test]
fn the_emulators_shared_files_name_no_service() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let services: Vec<String> = std::fs::read_dir(root.join("crates/core/src/services"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "rs" && stem != "mod" && stem != "fault_kinds").then_some(stem)
        })
        .collect();
    assert!(services.len() >= 4, "{services:?}");
    let src = root.join("crates/emulator/src");
    let folders: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && rust_files(p).iter().any(|f| {
                    std::fs::read_to_string(f)
                        .unwrap()
                        .contains("impl Service for")
                })
        })
        .collect();
    assert!(folders.len() >= 3, "{folders:?}");
    let names = |line: &str| {
        let lower = line.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        services.iter().any(|s| words.contains(&s.as_str()))
            || services.iter().any(|s| {
                let mut c = s.chars();
                let title = c.next().unwrap().to_uppercase().collect::<String>() + c.as_str();
                line.match_indices(&title).any(|(at, m)| {
                    line[at + m.len()..].starts_with(|c: char| c.is_ascii_uppercase())
                })
            })
    };
    let mut found = Vec::new();
    for f in rust_files(&src)
        .into_iter()
        .filter(|f| !folders.iter().any(|d| f.starts_with(d)) && !is_tests_file(f))
    {
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut in_registry = false;
        for (i, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if f.ends_with("service.rs") && t.starts_with("macro_rules! for_each_service") {
                in_registry = true;
            }
            if in_registry && t == "}" {
                in_registry = false;
            }
            let registry = in_registry || (f.ends_with("lib.rs") && t.starts_with("pub mod "));
            if t.starts_with("//") || registry {
                continue;
            }
            if names(line) {
                found.push(format!("{}:{}: {}", f.display(), i + 1, t));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} lines of the emulator's shared files name a service: {found:#?}",
        found.len()
    );
}

/// The layers of latlab's import graph: the longest chain of top-level modules each importing the
/// next, with the two crates below them (the emulator and the shared primitives). At most 12,
/// so a reader meets the run and the report side by side (the snapshot below both) rather than
/// one stacked on the other.
#[test]
fn the_import_graph_is_at_most_twelve_layers_deep() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = module_graph(&root.join("src"));
    fn chain(
        m: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        memo: &mut std::collections::BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        if let Some(c) = memo.get(m) {
            return c.clone();
        }
        let mut best = Vec::new();
        for next in &graph[m] {
            let c = chain(next, graph, memo);
            if c.len() > best.len() {
                best = c;
            }
        }
        best.insert(0, m.to_string());
        memo.insert(m.to_string(), best.clone());
        best
    }
    let mut memo = std::collections::BTreeMap::new();
    let longest = graph
        .keys()
        .map(|m| chain(m, &graph, &mut memo))
        .max_by_key(Vec::len)
        .unwrap();
    let layers = longest.len() + 2;
    println!(
        "{layers} layers: {} -> latlab_emulator -> latlab_core",
        longest.join(" -> ")
    );
    assert!(
        layers <= 12,
        "{layers} layers: {} -> latlab_emulator -> latlab_core",
        longest.join(" -> ")
    );
}

/// The items of the lab contract (`src/labs/lab.rs`'s traits) a lab must write: a `fn`,
/// `const` or `type` of a trait with no default. Each trait's items, by name.
fn required_items_of_the_lab_contract() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("src/labs/lab.rs")).unwrap();
    let mut required = Vec::new();
    let (mut trait_name, mut depth, mut item) = (None::<String>, 0i32, String::new());
    for line in text.lines() {
        let code = line.split("//").next().unwrap().trim();
        if depth == 0 {
            if let Some(rest) = code.strip_prefix("pub trait ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                trait_name = Some(name);
            }
        } else if depth == 1 && trait_name.is_some() && item.is_empty() {
            let starts = ["fn ", "async fn ", "const ", "type "];
            if starts.iter().any(|s| code.starts_with(s)) {
                item = code.to_string();
            }
        } else if depth == 1 && !item.is_empty() {
            item.push(' ');
            item.push_str(code);
        }
        if depth == 1 && !item.is_empty() {
            // The item ends at its first `;` or `{` at the trait's depth: a `;` with no `=`
            // (a type or const with a default has one) is an item without a default.
            let body = item.find('{');
            let end = item.find(';');
            match (body, end) {
                (Some(b), e) if e.is_none_or(|e| b < e) => item.clear(),
                (_, Some(_)) => {
                    let declared = item.split(';').next().unwrap();
                    let defaulted = (declared.starts_with("type ")
                        || declared.starts_with("const "))
                        && declared.contains(" = ");
                    if !defaulted {
                        let name: String = declared
                            .trim_start_matches("async ")
                            .split_whitespace()
                            .nth(1)
                            .unwrap_or("")
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        required.push(format!("{}::{name}", trait_name.as_deref().unwrap()));
                    }
                    item.clear();
                }
                _ => {}
            }
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        if depth == 0 {
            trait_name = None;
            item.clear();
        }
    }
    required
}

/// The lab contract stays small: at most 30 items a lab must write (49 before a lab's facts
/// became one record and the account traits took defaults), and the echo lab, a lab written
/// against it, at most 450 lines of production code (624 before).
#[test]
fn the_lab_contract_is_small_and_a_lab_is_short() {
    let required = required_items_of_the_lab_contract();
    println!("{} required items: {required:?}", required.len());
    for known in ["Lab::FACTS", "Setup::parse", "Live::start", "Shown::view"] {
        assert!(
            required.contains(&known.to_string()),
            "{known} in {required:?}"
        );
    }
    assert!(required.len() <= 30, "{required:?}");
    let echo = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/labs/echo");
    let lines: usize = rust_files(&echo)
        .iter()
        .filter(|f| f.file_name().unwrap() != "tests.rs")
        .map(|f| std::fs::read_to_string(f).unwrap().lines().count())
        .sum();
    println!("the echo lab: {lines} lines of production code");
    assert!(
        lines <= 450,
        "the echo lab has {lines} lines of production code"
    );
}
