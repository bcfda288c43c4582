//! Every command the README and the guides show, checked against the tool, so that no page drifts
//! from it. Each fenced `sh` block is marked:
//!
//! - ```` ```sh run ````: run as written by bash (`-e -o pipefail`), a file's blocks in order in
//!   one fresh directory (so a block can read what an earlier one wrote), with the built `latlab`
//!   first on the PATH and a fresh HOME; every block must succeed within its time bound.
//! - ```` ```sh parse ````: what cannot run here (a ten-minute run, a TUI, a real account, a
//!   build): each latlab command is parsed by latlab's own command line (`latlab::cli::Cli`) and its
//!   built-in scenario names resolved; `cargo` commands name a bench, test, fuzz target or the
//!   package that exists; a script exists and is executable; any other program must be on
//!   [`OTHER_PROGRAMS`], with why it is shown.
//!
//! A `$ ` line in a `text` block (a command shown with its output) is parsed the same way. A `sh`
//! block marked neither fails the test.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser as _;

/// Programs the pages show that are not latlab's and are not run: each is named for a reader who
/// has it (the aws CLI, ssh to reach a share, man for the page latlab writes).
const OTHER_PROGRAMS: &[(&str, &str)] = &[
    (
        "aws",
        "the aws CLI, to make a stream and a bucket on an account",
    ),
    ("ssh", "a tunnel to a share on another host"),
    ("man", "reading the man page latlab writes"),
];

/// How long one `run` block may take. The longest (two 6 s recordings, a replay and a compare)
/// takes about 20 s on two cores.
const BLOCK_LIMIT: Duration = Duration::from_secs(240);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages: the README, every guide in docs/, the architecture notes and the fuzzing notes.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("fuzz/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fenced block: where it opens, its language, its mark and its text.
#[derive(Debug)]
struct Block {
    page: String,
    line: usize,
    lang: String,
    mark: Option<String>,
    body: String,
}

fn blocks_of(page: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match open.take() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    let mut words = info.split_whitespace();
                    open = Some(Block {
                        page: page.to_string(),
                        line: i + 1,
                        lang: words.next().unwrap_or("").to_string(),
                        mark: words.next().map(str::to_string),
                        body: String::new(),
                    });
                }
            }
            Some(mut b) => {
                if line.trim_end() == "```" {
                    out.push(b);
                } else {
                    b.body.push_str(line);
                    b.body.push('\n');
                    open = Some(b);
                }
            }
        }
    }
    assert!(open.is_none(), "{page}: a fenced block is never closed");
    out
}

fn all_blocks() -> Vec<Block> {
    pages()
        .iter()
        .flat_map(|p| {
            let name = p.strip_prefix(root()).unwrap().display().to_string();
            blocks_of(&name, &std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// The words of a shell line as bash splits them (quotes, backslashes; `#` at a word's start
/// begins a comment), each `$(...)` taken out as a command of its own, and the line cut at `|`,
/// `&&`, `||`, `;` and redirections into the commands it runs.
fn commands_of(line: &str) -> Result<Vec<Vec<String>>, String> {
    let mut subs = Vec::new();
    let mut rest = line.to_string();
    while let Some(at) = rest.find("$(") {
        let end = rest[at..]
            .find(')')
            .ok_or_else(|| format!("an unclosed $( in: {line}"))?;
        subs.push(rest[at + 2..at + end].to_string());
        rest.replace_range(at..at + end + 1, "SUBSTITUTED");
    }
    let mut words: Vec<String> = Vec::new();
    let (mut word, mut in_word) = (String::new(), false);
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(format!("an unclosed ' in: {line}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => word.extend(chars.next()),
                        Some(c) => word.push(c),
                        None => return Err(format!("an unclosed \" in: {line}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let mut commands = vec![Vec::new()];
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        match w.as_str() {
            "|" | "&&" | "||" | ";" | "&" => commands.push(Vec::new()),
            ">" | ">>" | "<" | "2>" | "2>>" => skip_next = true,
            _ => commands.last_mut().unwrap().push(w),
        }
    }
    commands.retain(|c| !c.is_empty());
    for s in subs {
        commands.extend(commands_of(&s)?);
    }
    Ok(commands)
}

/// A block's lines with `\`-continued lines joined.
fn joined_lines(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in body.lines() {
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(line);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One command of a `parse` block checked against the tool, from the directory `cwd` (relative
/// to the checkout) a `cd` in the block moved to.
fn check_command(words: &[String], cwd: &mut PathBuf) -> Result<(), String> {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            })
        })
        .collect();
    let Some(&program) = words.first() else {
        return Ok(());
    };
    let here = root().join(&*cwd);
    match program {
        "latlab" => check_latlab(&words),
        "cd" => {
            let to = words.get(1).ok_or("cd names no folder")?;
            if !here.join(to).is_dir() {
                return Err(format!("cd {to}: no folder {to} in {}", cwd.display()));
            }
            cwd.push(to);
            Ok(())
        }
        "cargo" => check_cargo(&words, &here),
        p if p.contains('/') => {
            let path = here.join(p);
            let meta = std::fs::metadata(&path).map_err(|_| format!("{p}: no such script"))?;
            if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 == 0 {
                return Err(format!("{p}: not executable"));
            }
            Ok(())
        }
        p if OTHER_PROGRAMS.iter().any(|(n, _)| *n == p) => Ok(()),
        p => Err(format!(
            "{p}: not latlab, cargo or a script, and not on the test's list of other programs ({})",
            OTHER_PROGRAMS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn check_latlab(words: &[&str]) -> Result<(), String> {
    use latlab::cli::Command as C;
    let cli = match latlab::cli::Cli::try_parse_from(words) {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(e.to_string().lines().next().unwrap_or("").to_string()),
    };
    let scenario = match &cli.command {
        Some(C::Run(a)) => a.name.as_deref(),
        Some(C::Tui(a)) => a.name.as_deref(),
        Some(C::Screenshot(a)) => a.name.as_deref(),
        Some(C::Plan(a)) => a.name.as_deref(),
        Some(C::IamPolicy(a)) => a.name.as_deref(),
        _ => None,
    };
    match scenario {
        // A scenario file of the reader's own, written by an earlier step.
        Some(n) if n.ends_with(".toml") => Ok(()),
        Some(n) => latlab::scenario::Scenario::resolve(n)
            .map(|_| ())
            .map_err(|e| format!("scenario {n}: {e:#}")),
        None => Ok(()),
    }
}

/// The workspace's packages, from the manifest in `here`'s members: each one's name and its test
/// binaries (those its manifest lists as `[[test]]`, and unless `autotests = false`, those cargo
/// finds in its `tests/`: a file, or a folder with a `main.rs`).
fn workspace_packages(here: &Path) -> Vec<(String, Vec<String>)> {
    let read = |dir: &Path| -> Option<toml::Value> {
        toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).ok()?).ok()
    };
    let Some(root) = read(here) else {
        return Vec::new();
    };
    let members = root
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for dir in members
        .iter()
        .filter_map(toml::Value::as_str)
        .map(|m| here.join(m))
    {
        let Some(manifest) = read(&dir) else { continue };
        let Some(package) = manifest.get("package") else {
            continue;
        };
        let name = package
            .get("name")
            .and_then(toml::Value::as_str)
            .unwrap_or("");
        let mut tests: Vec<String> = manifest
            .get("test")
            .and_then(toml::Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(|t| t.get("name")?.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if package.get("autotests").and_then(toml::Value::as_bool) != Some(false) {
            for entry in std::fs::read_dir(dir.join("tests"))
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = entry.path();
                let file = path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                if let Some(stem) = file.strip_suffix(".rs") {
                    tests.push(stem.to_string());
                } else if path.join("main.rs").is_file() {
                    tests.push(file);
                }
            }
        }
        out.push((name.to_string(), tests));
    }
    out
}

fn check_cargo(words: &[&str], here: &Path) -> Result<(), String> {
    let arg = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|i| words.get(i + 1).copied())
            .ok_or(format!("cargo {}: no {flag}", words[1..].join(" ")))
    };
    match words.get(1).copied() {
        Some("run") => {
            let mut args = vec!["latlab"];
            if let Some(i) = words.iter().position(|w| *w == "--") {
                args.extend(&words[i + 1..]);
            }
            check_latlab(&args)
        }
        Some("install") if words.contains(&"cargo-fuzz") => Ok(()),
        Some("install") => {
            let toml = std::fs::read_to_string(here.join(arg("--path")?).join("Cargo.toml"))
                .map_err(|e| format!("cargo install: {e}"))?;
            toml.contains("name = \"latlab\"")
                .then_some(())
                .ok_or("cargo install --path: not latlab's package".to_string())
        }
        Some("bench") => exists(here, &format!("benches/{}.rs", arg("--bench")?)),
        Some("test") => {
            // A test binary is one of a workspace package's, of the package `-p` names if any.
            let packages = workspace_packages(&root());
            let named = words.contains(&"-p").then(|| arg("-p")).transpose()?;
            if let Some(p) = named
                && !packages.iter().any(|(name, _)| name == p)
            {
                let names: Vec<&str> = packages.iter().map(|(n, _)| n.as_str()).collect();
                return Err(format!(
                    "-p {p}: no package of that name in the workspace ({})",
                    names.join(", ")
                ));
            }
            for (i, w) in words.iter().enumerate() {
                if *w == "--test" {
                    let name = words.get(i + 1).ok_or("--test names nothing")?;
                    let owners: Vec<&str> = packages
                        .iter()
                        .filter(|(_, tests)| tests.iter().any(|t| t == name))
                        .map(|(p, _)| p.as_str())
                        .collect();
                    match named {
                        _ if owners.is_empty() => {
                            return Err(format!("--test {name}: no test binary of that name"));
                        }
                        Some(p) if !owners.contains(&p) => {
                            return Err(format!(
                                "--test {name}: not a test of -p {p} (it is {}'s)",
                                owners.join(", ")
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        }
        Some("fuzz") => match words.get(2).copied() {
            Some("list") => Ok(()),
            // cargo fuzz finds fuzz/ from the checkout's root, or runs in it.
            Some("run") => {
                let t = words.get(3).ok_or("cargo fuzz run names no target")?;
                exists(here, &format!("fuzz_targets/{t}.rs"))
                    .or_else(|_| exists(here, &format!("fuzz/fuzz_targets/{t}.rs")))
            }
            other => Err(format!(
                "cargo fuzz {other:?}: not a command the pages should show"
            )),
        },
        other => Err(format!(
            "cargo {other:?}: not a command the pages should show"
        )),
    }
}

fn exists(here: &Path, path: &str) -> Result<(), String> {
    here.join(path)
        .is_file()
        .then_some(())
        .ok_or(format!("{path}: no such file"))
}

/// Every command of a block (a `parse` block, or a `text` block's `$ ` lines), checked.
fn check_block(b: &Block) -> Vec<String> {
    let mut problems = Vec::new();
    let mut cwd = PathBuf::new();
    let lines: Vec<String> = if b.lang == "sh" {
        joined_lines(&b.body)
    } else {
        b.body
            .lines()
            .filter_map(|l| l.strip_prefix("$ ").map(str::to_string))
            .collect()
    };
    for line in lines {
        match commands_of(&line) {
            Err(e) => problems.push(format!("{}:{}: {e}", b.page, b.line)),
            Ok(cmds) => {
                for c in cmds {
                    if let Err(e) = check_command(&c, &mut cwd) {
                        problems.push(format!("{}:{}: `{}`: {e}", b.page, b.line, line.trim()));
                    }
                }
            }
        }
    }
    problems
}

#[test]
fn every_sh_block_is_marked_run_or_parse() {
    let unmarked: Vec<String> = all_blocks()
        .iter()
        .filter(|b| b.lang == "sh" && !matches!(b.mark.as_deref(), Some("run" | "parse")))
        .map(|b| {
            format!(
                "{}:{}: ```sh {}",
                b.page,
                b.line,
                b.mark.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(
        unmarked.is_empty(),
        "these sh blocks are marked neither `run` (the test runs them) nor `parse` (it parses their commands):\n{}",
        unmarked.join("\n")
    );
    // The README's first block is its two set-up commands.
    let readme = blocks_of(
        "README.md",
        &std::fs::read_to_string(root().join("README.md")).unwrap(),
    );
    let first: Vec<String> = joined_lines(&readme[0].body)
        .iter()
        .flat_map(|l| commands_of(l).unwrap())
        .map(|c| c.join(" "))
        .collect();
    assert_eq!(first, ["cargo run --release", "scripts/test"]);
}

#[test]
fn the_commands_of_parse_blocks_and_prompts_are_the_tools() {
    let blocks = all_blocks();
    let checked: Vec<&Block> = blocks
        .iter()
        .filter(|b| {
            (b.lang == "sh" && b.mark.as_deref() == Some("parse"))
                || (b.lang == "text" && b.body.lines().any(|l| l.starts_with("$ ")))
        })
        .collect();
    assert!(
        checked.len() >= 20,
        "only {} blocks to parse",
        checked.len()
    );
    let problems: Vec<String> = checked.iter().flat_map(|b| check_block(b)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check itself: a flag latlab does not have, a scenario it does not know, a bench, a
/// script or a program that is not there, each refused with what is wrong.
#[test]
fn a_command_that_drifted_from_the_tool_is_refused() {
    let check = |line: &str| {
        let b = Block {
            page: "page.md".into(),
            line: 1,
            lang: "sh".into(),
            mark: Some("parse".into()),
            body: format!("{line}\n"),
        };
        check_block(&b).join("\n")
    };
    assert!(check("latlab run demo --no-such-flag").contains("--no-such-flag"));
    assert!(
        check("latlab run no-such-scenario --duration 5s").contains("scenario no-such-scenario")
    );
    assert!(check("latlab tui demo --fps 0 # too slow").contains("--fps"));
    assert!(check("cargo bench --bench nothing").contains("benches/nothing.rs: no such file"));
    assert!(check("scripts/no-such-script").contains("no such script"));
    assert!(
        check("cargo test -p latlab-emulatr --test services")
            .contains("-p latlab-emulatr: no package")
    );
    assert!(
        check("cargo test --test no_such_binary").contains("--test no_such_binary: no test binary")
    );
    assert!(
        check("cargo test -p latlab-emulator --test services hostile_s3").contains(
            "--test services: not a test of -p latlab-emulator (it is latlab-emulator-tests's)"
        )
    );
    assert_eq!(
        check("cargo test -p latlab-emulator-tests --test services hostile_s3"),
        ""
    );
    assert!(check("curl http://x | latlab run demo").contains("curl: not latlab"));
    assert!(check("LATLAB_X=$(scripts/none REV) cargo bench --bench tui").contains("scripts/none"));
    assert_eq!(
        check("latlab run demo --duration 2m --format markdown --output round2.md"),
        ""
    );
    assert_eq!(
        check("A=1 latlab compare a b \\\n  --format json > out.json  # comment"),
        ""
    );
    let text = Block {
        page: "page.md".into(),
        line: 1,
        lang: "text".into(),
        mark: None,
        body: "$ latlab compar a b\noutput, not a command\n".into(),
    };
    assert!(check_block(&text).join("").contains("compar"));
}

/// A block's run: bash with the built latlab first on the PATH, in `dir`, bounded in time.
fn run_block(b: &Block, dir: &Path, home: &Path) -> Result<(), String> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_latlab"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = dir.join(".block-output");
    let file = std::fs::File::create(&out).unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["-e", "-o", "pipefail", "-c", &b.body])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file);
    for (k, _) in std::env::vars() {
        if k.starts_with("LATLAB_") {
            cmd.env_remove(k);
        }
    }
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| format!("bash: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > BLOCK_LIMIT {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut text = String::new();
    std::fs::File::open(&out)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let _ = std::fs::remove_file(&out);
    let tail: Vec<&str> = text.lines().rev().take(25).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!(
            "{}:{}: {s}; its output ended:\n{}",
            b.page,
            b.line,
            tail.join("\n")
        )),
        None => Err(format!(
            "{}:{}: still running after {BLOCK_LIMIT:?}; killed",
            b.page, b.line
        )),
    }
}

#[test]
fn the_run_blocks_run() {
    let blocks = all_blocks();
    let mut by_page: Vec<(String, Vec<&Block>)> = Vec::new();
    for b in blocks
        .iter()
        .filter(|b| b.lang == "sh" && b.mark.as_deref() == Some("run"))
    {
        match by_page.iter_mut().find(|(p, _)| *p == b.page) {
            Some((_, v)) => v.push(b),
            None => by_page.push((b.page.clone(), vec![b])),
        }
    }
    assert!(
        by_page.len() >= 6,
        "run blocks on only {} pages",
        by_page.len()
    );
    // Two pages at a time: each block is mostly a few seconds of a run.
    let problems: Vec<String> = by_page
        .chunks(2)
        .flat_map(|pair| {
            std::thread::scope(|s| {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|(_, page_blocks)| {
                        s.spawn(move || {
                            let dir = tempfile::tempdir().unwrap();
                            let home = tempfile::tempdir().unwrap();
                            page_blocks
                                .iter()
                                .map(|b| run_block(b, dir.path(), home.path()))
                                .find_map(Result::err)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .filter_map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A run block that fails is named with its page, its line and how its output ended.
#[test]
fn a_run_block_that_fails_is_named_with_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let b = Block {
        page: "page.md".into(),
        line: 7,
        lang: "sh".into(),
        mark: Some("run".into()),
        body: "latlab --version\nlatlab run no-such-scenario\necho never\n".into(),
    };
    let e = run_block(&b, dir.path(), dir.path()).unwrap_err();
    assert!(e.starts_with("page.md:7: exit status: "), "{e}");
    assert!(
        e.contains("latlab ") && e.contains("no-such-scenario") && !e.contains("never"),
        "{e}"
    );
}

/// docs/install.md's `config show` example, run as a reader would: the file the guide shows in
/// their config directory, `LATLAB_FPS=20 latlab config show --theme mono`, no other LATLAB_*
/// variable (the reader has not set the Redis password the file names). What it prints is the
/// guide's table, cell for cell, with the reader's home for `/home/me` (it failed on the
/// unset variable, while the guide showed it working).
#[test]
fn the_config_show_example_prints_what_the_guide_shows() {
    let page = std::fs::read_to_string(root().join("docs/install.md")).unwrap();
    let blocks = blocks_of("docs/install.md", &page);
    let file = blocks
        .iter()
        .find(|b| b.lang == "toml" && b.body.contains("redis_password_env"))
        .expect("the guide's config file");
    let shown = blocks
        .iter()
        .find(|b| b.lang == "text" && b.body.contains("latlab config show --theme mono"))
        .expect("the guide's config show");
    let mut lines = shown.body.lines();
    let prompt = lines.next().unwrap();
    assert_eq!(prompt, "$ LATLAB_FPS=20 latlab config show --theme mono");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("me");
    let config = home.join(".config/latlab");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), &file.body).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_latlab"));
    cmd.args(["config", "show", "--theme", "mono"])
        .current_dir(tmp.path())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("LATLAB_FPS", "20");
    for (k, _) in std::env::vars() {
        if (k.starts_with("LATLAB_") && k != "LATLAB_FPS") || k == "AWS_REGION" {
            cmd.env_remove(k);
        }
    }
    let out = cmd.output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).replace(home.to_str().unwrap(), "/home/me");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Cells are what the columns hold: split at runs of two or more spaces.
    let cells = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect()
            })
            .collect()
    };
    let guide: Vec<&str> = lines.collect();
    assert_eq!(
        cells(&printed),
        cells(&guide.join("\n")),
        "docs/install.md:{} shows other than latlab prints:\n{printed}",
        shown.line
    );
}
