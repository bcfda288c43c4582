//! latlab on a user's machine: `--version`, shell completions, the man page, the config file and
//! its precedence, and scenarios of one's own. Each test runs the built binary as a user would,
//! with its own empty config home and no LATLAB_* variables but those it sets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// latlab with a config home of its own (`home`), and the variables that set options removed.
fn latlab(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_latlab"));
    c.env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("AWS_REGION")
        .env_remove("NO_COLOR");
    for (name, _) in std::env::vars() {
        if name.starts_with("LATLAB_") {
            c.env_remove(name);
        }
    }
    c
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(c: &mut Command) -> String {
    let o = c.output().expect("latlab runs");
    assert!(o.status.success(), "{:?} failed: {}", c, stderr(&o));
    stdout(&o)
}

fn fails(c: &mut Command) -> String {
    let o = c.output().expect("latlab runs");
    assert!(!o.status.success(), "{:?} should fail: {}", c, stdout(&o));
    let e = stderr(&o);
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// Writes the default config file (`$XDG_CONFIG_HOME/latlab/config.toml`); returns its path.
fn write_config(home: &Path, text: &str) -> PathBuf {
    let dir = home.join("config").join("latlab");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The `config show` row of `key`: (value, source).
fn row(show: &str, key: &str) -> (String, String) {
    let line = show
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no row {key} in\n{show}"));
    let header = show.lines().find(|l| l.starts_with("key ")).unwrap();
    let value_at = header.find("value").unwrap();
    let from_at = header.find("from").unwrap();
    let value = line[value_at..from_at].trim().to_string();
    (value, line[from_at..].trim().to_string())
}

const SUBCOMMANDS: &[&str] = &[
    "tui",
    "screenshot",
    "themes",
    "run",
    "scenarios",
    "faults",
    "emulate",
    "profile",
    "report",
    "replay",
    "compare",
    "merge",
    "config",
    "completions",
    "man",
    "doctor",
    "prices",
];

#[test]
fn version_names_the_commit_it_was_built_from() {
    let home = tempfile::tempdir().unwrap();
    let out = ok(latlab(home.path()).arg("--version"));
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_string();
    assert!(
        out.starts_with(&format!(
            "latlab {} (commit {commit}, ",
            env!("CARGO_PKG_VERSION")
        )),
        "{out}"
    );
}

/// A panic names the build it came from (version and commit, as `--version` does), where it
/// panicked and why, how to get a backtrace, and that it is a bug to report; with
/// RUST_BACKTRACE=1 there is a backtrace, which in a debug build names latlab's functions (the
/// release profile strips symbols, and its hint says to use a debug build for names).
#[test]
fn a_panic_names_the_commit_and_how_to_get_a_backtrace() {
    let home = tempfile::tempdir().unwrap();
    let version = ok(latlab(home.path()).arg("--version"));
    let version = version.trim().trim_start_matches("latlab ").to_string();
    let run = |backtrace: &str| {
        let o = latlab(home.path())
            .arg("--version")
            .env("LATLAB_PANIC_FOR_TEST", "1")
            .env("RUST_BACKTRACE", backtrace)
            .output()
            .expect("latlab runs");
        assert_eq!(o.status.code(), Some(101), "a panic exits 101: {o:?}");
        stderr(&o)
    };
    let plain = run("0");
    assert!(
        plain.starts_with(&format!(
            "latlab {version} panicked in thread 'main' at src/cli/panic.rs:"
        )),
        "{plain}"
    );
    assert!(plain.contains("latlab panicked on purpose"), "{plain}");
    assert!(
        plain.contains("run the same command again with RUST_BACKTRACE=1"),
        "{plain}"
    );
    assert!(
        plain.contains("This is a bug in latlab. Please report it"),
        "{plain}"
    );
    let traced = run("1");
    assert!(traced.contains("backtrace:"), "{traced}");
    if cfg!(debug_assertions) {
        assert!(
            traced.contains("latlab::cli::main"),
            "a debug build's backtrace names latlab's functions:\n{traced}"
        );
    }
    assert!(!traced.contains("For a backtrace, run"), "{traced}");
}

/// What bash offers after `latlab WORDS... <TAB>`, from the script `latlab completions bash`
/// writes, run by bash itself.
fn bash_offers(script: &Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n_latlab latlab '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.last().unwrap(),
        words[words.len().saturating_sub(2)],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash is needed to check the bash completion");
    assert!(out.status.success(), "bash: {}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn bash_completion_offers_every_subcommand_and_builtin_scenario() {
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("latlab.bash");
    std::fs::write(
        &script,
        ok(latlab(home.path()).args(["completions", "bash"])),
    )
    .unwrap();

    let top = bash_offers(&script, &["latlab", ""]);
    for sub in SUBCOMMANDS {
        assert!(
            top.iter().any(|w| w == sub),
            "`latlab <TAB>` lacks {sub}: {top:?}"
        );
    }
    let scenarios = ok(latlab(home.path()).arg("scenarios"));
    let builtin: Vec<&str> = scenarios
        .lines()
        .skip_while(|l| *l != "built in:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(builtin.len() >= 9, "{scenarios}");
    for words in [
        &["latlab", "run", ""][..],
        &["latlab", "tui", ""][..],
        &["latlab", "screenshot", ""][..],
    ] {
        let offered = bash_offers(&script, words);
        for name in &builtin {
            assert!(
                offered.iter().any(|w| w == name),
                "`{} <TAB>` lacks {name}: {offered:?}",
                words.join(" ")
            );
        }
    }
    // A prefix narrows it, as bash users expect.
    let seeds = bash_offers(&script, &["latlab", "run", "seed-k"]);
    assert_eq!(seeds, ["seed-kinesis-round1", "seed-kinesis-round2"]);

    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let text = ok(latlab(home.path()).args(["completions", shell]));
        for word in SUBCOMMANDS {
            assert!(text.contains(word), "the {shell} completion lacks {word}");
        }
        // clap_complete's PowerShell and Elvish scripts complete commands and options only.
        if matches!(shell, "zsh" | "fish") {
            assert!(text.contains("seed-kinesis-round2"), "{shell}");
        }
    }
    let e = fails(latlab(home.path()).args(["completions", "tcsh"]));
    assert!(
        e.contains("invalid value 'tcsh'") && e.contains("bash, elvish, fish, powershell, zsh"),
        "{e}"
    );
}

#[test]
fn man_page_renders_with_every_command_and_variable() {
    let home = tempfile::tempdir().unwrap();
    let page = home.path().join("latlab.1");
    std::fs::write(&page, ok(latlab(home.path()).arg("man"))).unwrap();
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-rLL=100n", "-P-cbou"])
        .arg(&page)
        .output()
        .expect("groff (Debian's groff-base, on every Debian system) renders the man page");
    let text = String::from_utf8_lossy(&out.stdout).replace(['\u{2010}', '\u{2011}'], "-");
    let warnings = stderr(&out);
    assert!(
        out.status.success() && warnings.trim().is_empty(),
        "groff: {warnings}"
    );
    for sub in SUBCOMMANDS {
        assert!(
            text.contains(&format!("latlab {sub}")),
            "no section for {sub}"
        );
    }
    for needle in [
        "LATLAB_CONFIG",
        "LATLAB_ENDPOINT_URL",
        "LATLAB_THEME",
        "config.toml",
        "--latency-profile",
    ] {
        assert!(text.contains(needle), "the man page lacks {needle}");
    }
}

#[test]
fn flag_beats_environment_beats_config_file_beats_builtin() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let show = |c: &mut Command| ok(c);
    let cmd = |args: &[&str]| {
        let mut c = latlab(h);
        c.args(["config", "show"]).args(args);
        c
    };

    // Built-in: no file.
    let s = show(&mut cmd(&[]));
    assert!(s.contains("(none there;"), "{s}");
    assert_eq!(row(&s, "theme").1, "built-in");
    assert_eq!(row(&s, "fps"), ("5".into(), "built-in".into()));

    let path = write_config(
        h,
        "# mine\ntheme = \"light\"\nfps = 12\nendpoint_url = \"http://127.0.0.1:4566\"\n",
    );
    let file = |line: u32| format!("config file {}, line {line}", path.display());
    let s = show(&mut cmd(&[]));
    assert_eq!(row(&s, "theme"), ("light".into(), file(2)));
    assert_eq!(row(&s, "fps"), ("12".into(), file(3)));
    assert_eq!(
        row(&s, "endpoint_url"),
        ("http://127.0.0.1:4566".into(), file(4))
    );

    // The environment beats the file.
    let s = show(cmd(&[]).env("LATLAB_THEME", "mono").env("LATLAB_FPS", "20"));
    assert_eq!(
        row(&s, "theme"),
        ("mono".into(), "environment LATLAB_THEME".into())
    );
    assert_eq!(
        row(&s, "fps"),
        ("20".into(), "environment LATLAB_FPS".into())
    );

    // A flag beats both.
    let s = show(cmd(&["--theme", "dark", "--aws"]).env("LATLAB_THEME", "mono"));
    assert_eq!(row(&s, "theme"), ("dark".into(), "flag --theme".into()));
    // --aws and the endpoint are one choice: the flag's wins over the file's endpoint.
    assert_eq!(row(&s, "aws"), ("true".into(), "flag --aws".into()));
    assert_eq!(
        row(&s, "endpoint_url").0,
        "none: the embedded emulator (not set)"
    );

    // The region's variable is the SDK's own, AWS_REGION: it beats the file as the others do.
    let path = write_config(h, "region = \"ap-northeast-1\"\n");
    let s = show(&mut cmd(&[]));
    assert_eq!(
        row(&s, "region"),
        (
            "ap-northeast-1".into(),
            format!("config file {}, line 1", path.display())
        )
    );
    let s = show(cmd(&[]).env("AWS_REGION", "eu-west-1"));
    assert_eq!(
        row(&s, "region"),
        ("eu-west-1".into(), "environment AWS_REGION".into())
    );
    let s = show(cmd(&["--region", "us-west-2"]).env("AWS_REGION", "eu-west-1"));
    assert_eq!(
        row(&s, "region"),
        ("us-west-2".into(), "flag --region".into())
    );

    // --config names another file, and LATLAB_CONFIG does as --config does.
    let other = h.join("other.toml");
    std::fs::write(&other, "fps = 30\n").unwrap();
    for c in [cmd(&["--config", other.to_str().unwrap()]), {
        let mut c = cmd(&[]);
        c.env("LATLAB_CONFIG", &other);
        c
    }] {
        let s = show(&mut { c });
        assert_eq!(
            row(&s, "fps"),
            (
                "30".into(),
                format!("config file {}, line 1", other.display())
            )
        );
        assert_eq!(row(&s, "theme").1, "built-in");
    }
}

#[test]
fn the_example_config_file_is_valid_commented_and_uncommented() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let example = ok(latlab(h).args(["config", "example"]));
    // As written, every key commented out: a file that sets nothing.
    write_config(h, &example);
    let s = ok(latlab(h).args(["config", "show"]));
    assert!(s.contains("(read)"), "{s}");
    assert!(s.lines().skip(4).all(|l| l.ends_with("built-in")), "{s}");
    // Every key uncommented (but `aws`, which the endpoint excludes, and `prices`, which names a
    // file that must exist): each is read, from its own line.
    let text: String = example
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(kv)
                if kv.contains(" = ") && !kv.starts_with("aws ") && !kv.starts_with("prices ") =>
            {
                kv.to_string()
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = write_config(h, &text);
    let s = ok(latlab(h)
        .env("LATLAB_REDIS_PASSWORD", "pw")
        .args(["config", "show"]));
    for key in [
        "theme",
        "fps",
        "log",
        "latency_profile",
        "endpoint_url",
        "region",
        "stream",
        "s3_bucket",
        "s3_express_bucket",
        "redis_primary",
        "redis_replica",
        "redis_password_env",
        "scenario_dirs",
    ] {
        let line = text
            .lines()
            .position(|l| l.starts_with(&format!("{key} = ")))
            .unwrap()
            + 1;
        assert!(
            row(&s, key)
                .1
                .starts_with(&format!("config file {}, line {line}", path.display())),
            "{key}: {s}"
        );
    }
}

#[test]
fn config_file_values_reach_the_run_and_redis_passwords_stay_hidden() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    write_config(
        h,
        "latency_profile = \"zero\"\nredis_primary = \"redis://10.0.0.1:6379\"\nredis_replica = \"redis://10.0.0.2:6379\"\nredis_password_env = \"MY_REDIS_PASSWORD\"\n",
    );
    let s = ok(latlab(h)
        .env("MY_REDIS_PASSWORD", "hunter2")
        .args(["config", "show"]));
    assert!(!s.contains("hunter2"), "{s}");
    let (primary, from) = row(&s, "redis_primary");
    assert_eq!(primary, "redis://:***@10.0.0.1:6379");
    assert!(
        from.ends_with("line 2 (password from MY_REDIS_PASSWORD when the URL has none)"),
        "{from}"
    );

    // Without the variable, `config show` shows the file as it is and says the variable is not
    // set (it failed, where docs/install.md shows it working); a run stops on it.
    let s = ok(latlab(h).args(["config", "show"]));
    let (primary, from) = row(&s, "redis_primary");
    assert_eq!(primary, "redis://10.0.0.1:6379");
    assert!(
        from.ends_with("MY_REDIS_PASSWORD is not set: a run stops until it is)"),
        "{from}"
    );
    let e = fails(latlab(h).args(["run", "redis-demo", "--duration", "1s", "-q"]));
    assert!(
        e.contains(
            "redis_password_env names the environment variable MY_REDIS_PASSWORD, which is not set"
        ),
        "{e}"
    );

    // The file's latency profile is the run's (a headless demo of 1 s, Kinesis only).
    write_config(h, "latency_profile = \"zero\"\n");
    let report = ok(latlab(h).args(["run", "demo", "--duration", "1s", "-q"]));
    assert!(
        report.contains("backend  embedded emulator, latency profile zero"),
        "{report}"
    );
    let report = ok(latlab(h)
        .args(["run", "demo", "--duration", "1s", "-q"])
        .args(["--latency-profile", "same-region"]));
    assert!(report.contains("latency profile same-region"), "{report}");
}

/// One file serves runs of both kinds: its latency profile shapes the embedded emulator only,
/// and its stream and buckets are used on an endpoint or AWS only.
#[test]
fn a_config_file_for_aws_still_runs_on_the_embedded_emulator() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    write_config(
        h,
        "latency_profile = \"zero\"\nstream = \"orders\"\ns3_bucket = \"my-bucket\"\ns3_express_bucket = \"my--use1-az4--x-s3\"\n",
    );
    let report = ok(latlab(h).args(["run", "demo", "--duration", "1s", "-q"]));
    assert!(
        report.contains("backend  embedded emulator, latency profile zero"),
        "{report}"
    );
    assert!(report.contains("stream   latlab-demo"), "{report}");
    // With an endpoint (a port with nothing there), the profile is left out rather than refused:
    // the run fails on the endpoint itself.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = fails(
        latlab(h)
            .env("AWS_ACCESS_KEY_ID", "x")
            .env("AWS_SECRET_ACCESS_KEY", "y")
            .env("AWS_REGION", "us-east-1")
            .args(["run", "demo", "--duration", "1s", "-q"])
            .args(["--endpoint-url", &format!("http://127.0.0.1:{port}")]),
    );
    assert!(!e.contains("--latency-profile"), "{e}");
    assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
}

#[test]
fn bad_config_files_name_the_file_the_line_and_the_key() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cases: &[(&str, &str)] = &[
        (
            "theme = \"dark\"\nthemes = \"light\"\n",
            "line 2: unknown key `themes`; valid keys: theme, fps, log, latency_profile, endpoint_url, aws, region, stream, s3_bucket, s3_express_bucket, redis_primary, redis_replica, redis_password_env, prices, share, share_viewers, share_control, max_cost, scenario_dirs",
        ),
        (
            "share_viewers = 0\n",
            "line 1, key `share_viewers`: must be a whole number of viewers from 1 to 1000, not 0",
        ),
        (
            "share = \"nowhere\"\n",
            "line 1, key `share`: share nowhere: not an address",
        ),
        (
            "\nfps = 0\n",
            "line 2, key `fps`: must be a whole number of frames per second from 1 to 60, not 0",
        ),
        (
            "theme = \"neon\"\n",
            "line 1, key `theme`: unknown theme 'neon': valid names are dark, light, mono, or a theme file",
        ),
        (
            "latency_profile = \"mars\"\n",
            "line 1, key `latency_profile`: unknown latency profile 'mars'",
        ),
        (
            "endpoint_url = \"localhost:4566\"\n",
            "line 1, key `endpoint_url`: --endpoint-url 'localhost:4566' must start with http:// or https://",
        ),
        (
            "aws = \"yes\"\n",
            "line 1, key `aws`: must be true or false, not \"yes\"",
        ),
        (
            "redis_primary = \"10.0.0.1:6379\"\n",
            "line 1, key `redis_primary`: must be a redis:// or rediss:// URL",
        ),
        (
            "scenario_dirs = \"mine\"\n",
            "line 1, key `scenario_dirs`: must be a list of directories",
        ),
        (
            "prices = \"nowhere.toml\"\n",
            "line 1, key `prices`: cannot read prices file",
        ),
        ("fps = \n", "line 1, column"),
        (
            "max_cost = -1\n",
            "line 1, key `max_cost`: must be a positive number of US dollars",
        ),
    ];
    for (text, want) in cases {
        let path = write_config(h, text);
        let e = fails(latlab(h).arg("scenarios"));
        let want = format!("latlab: error: config file {}: {want}", path.display());
        assert!(e.starts_with(&want), "for {text:?}:\n{e}\nwanted:\n{want}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let e = fails(latlab(h).args(["--config", "/nonexistent/latlab.toml", "faults"]));
    assert!(
        e.starts_with("latlab: error: cannot read config file /nonexistent/latlab.toml:"),
        "{e}"
    );
}

#[test]
fn scenarios_of_ones_own_are_listed_started_and_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mine = h.join("my-scenarios");
    let path = write_config(h, "scenario_dirs = [\"~/my-scenarios\"]\n");

    let out = ok(latlab(h).current_dir(h).args([
        "scenarios",
        "new",
        "quick-efo",
        "--from",
        "seed-kinesis-round1",
    ]));
    let file = mine.join("quick-efo.toml");
    assert!(
        out.starts_with(&format!("wrote {}\n", file.display())),
        "{out}"
    );
    assert!(out.contains("`latlab tui quick-efo`"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(
            "# quick-efo: a latlab scenario, started from `seed-kinesis-round1` (built in)."
        ),
        "{text}"
    );
    assert!(
        text.contains("The [seed] tables below are the seed experiment's own figures"),
        "{text}"
    );
    assert!(text.contains("\nname = \"quick-efo\"\n"), "{text}");

    // Listed under its directory, with where that was named, and marked apart from the built-in ones.
    std::fs::write(mine.join("broken.toml"), "name = \"broken\"\n").unwrap();
    let list = ok(latlab(h).current_dir(h).arg("scenarios"));
    let section = format!(
        "\nin {} (from config file {}, line 1):\n",
        mine.display(),
        path.display()
    );
    assert!(list.contains(&section), "{list}");
    assert!(list.starts_with("built in:\n  demo "), "{list}");
    let after = &list[list.find(&section).unwrap()..];
    assert!(
        after.contains("  broken                 (invalid: line 1"),
        "{list}"
    );
    assert!(
        after.contains("  quick-efo              quick-efo, started from seed-kinesis-round1: "),
        "{list}"
    );

    // It runs by name; LATLAB_SCENARIO_DIRS beats the file's directories.
    let report = ok(latlab(h).args([
        "run",
        "quick-efo",
        "--duration",
        "1s",
        "-q",
        "--latency-profile",
        "zero",
    ]));
    assert!(report.starts_with("latlab: quick-efo - "), "{report}");
    let e = fails(
        latlab(h)
            .env("LATLAB_SCENARIO_DIRS", h.join("elsewhere"))
            .args(["run", "quick-efo"]),
    );
    assert!(
        e.contains("unknown scenario 'quick-efo'")
            && e.contains(&format!(
                "NAME.toml was looked for in {}",
                h.join("elsewhere").display()
            )),
        "{e}"
    );

    // A second one of that name, a built-in name and a bad name are refused.
    let e = fails(latlab(h).args(["scenarios", "new", "quick-efo"]));
    assert!(
        e.contains(&format!(
            "{} already exists; latlab does not overwrite it",
            file.display()
        )),
        "{e}"
    );
    let e = fails(latlab(h).args(["scenarios", "new", "demo"]));
    assert!(e.contains("'demo' is a built-in scenario's name"), "{e}");
    let e = fails(latlab(h).args(["scenarios", "new", "my scenario"]));
    assert!(e.contains("'my scenario' cannot be a scenario name"), "{e}");
    let e = fails(latlab(h).args(["scenarios", "new", "x", "--from", "nope"]));
    assert!(e.contains("--from nope: unknown scenario 'nope'"), "{e}");

    // With no directory configured, it goes to the current directory and says to run it by path.
    let bare = tempfile::tempdir().unwrap();
    let out = ok(latlab(bare.path())
        .current_dir(bare.path())
        .args(["scenarios", "new", "here"]));
    assert!(out.contains("`latlab tui ./here.toml`"), "{out}");
    let report = ok(latlab(bare.path()).current_dir(bare.path()).args([
        "run",
        "./here.toml",
        "--duration",
        "1s",
        "-q",
        "--latency-profile",
        "zero",
    ]));
    assert!(
        report.starts_with("latlab: here - here, started from demo: "),
        "{report}"
    );
}

#[test]
fn a_reader_that_goes_away_ends_latlab_quietly() {
    // `latlab man | head -1`: the reader closes the pipe while latlab still writes.
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["man"][..],
        &["completions", "bash"],
        &["scenarios"],
        &["faults"],
    ] {
        let mut child = latlab(home.path())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let e = stderr(&out);
        assert!(
            out.status.success() && e.is_empty(),
            "latlab {args:?}: {:?} {e}",
            out.status
        );
    }
}
