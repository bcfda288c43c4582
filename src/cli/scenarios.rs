//! `latlab scenarios`: the built-in scenarios and those in the scenario directories; and
//! `latlab scenarios new NAME` to start one's own.

use super::*;

#[derive(Args, Debug, Default)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ScenariosArgs {
    #[command(subcommand)]
    pub command: Option<ScenariosCommand>,
}

#[derive(Subcommand, Debug)]
pub enum ScenariosCommand {
    /// Write a commented scenario file to start from, copied from a built-in (or any) scenario
    New(NewArgs),
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// The new scenario's name (letters, digits, - and _); the file is NAME.toml
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The scenario to copy: a built-in name, one in the scenario directories, or a file
    #[arg(long, value_name = "SCENARIO", default_value = "demo", value_parser = ScenarioName)]
    pub from: String,
    /// Where to write it [default: the first scenario directory the config file or
    /// LATLAB_SCENARIO_DIRS names, else ./scenarios/ when it exists, else the current directory]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Accepts any scenario name or file, and offers the built-in names to shell completion.
#[derive(Clone, Copy, Debug)]
pub struct ScenarioName;

impl clap::builder::TypedValueParser for ScenarioName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::scenario::builtin()
                .iter()
                .map(|(n, _)| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

pub(super) fn scenarios(
    args: ScenariosArgs,
    dirs: &[(PathBuf, String)],
) -> anyhow::Result<ExitCode> {
    match args.command {
        None => {
            out!("{}", scenarios_listing(dirs));
            Ok(ExitCode::SUCCESS)
        }
        Some(ScenariosCommand::New(a)) => {
            let (path, searched) = new_scenario(&a, dirs)?;
            out!("wrote {}\n", path.display());
            let run = if searched {
                a.name.clone()
            } else {
                path.display().to_string()
            };
            out!(
                "run it live with `latlab tui {run}`, or headless with `latlab run {run}`; `latlab scenarios` lists it\n"
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `latlab scenarios`: the built-in scenarios, then each scenario directory's, a line each; a
/// file that does not parse is listed with its error.
pub fn scenarios_listing(dirs: &[(PathBuf, String)]) -> String {
    let mut out = String::from("built in:\n");
    for (name, _) in crate::scenario::builtin() {
        match Scenario::resolve(name) {
            Ok(s) => out.push_str(&format!("  {:<22} {}\n", s.name, s.description)),
            Err(e) => out.push_str(&format!("  {name:<22} (invalid: {e:#})\n")),
        }
    }
    for (dir, origin) in dirs {
        out.push_str(&format!("\nin {} (from {origin}):\n", dir.display()));
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect(),
            Err(e) => {
                out.push_str(&format!("  (cannot read it: {e})\n"));
                continue;
            }
        };
        files.sort();
        // A checkout's scenarios/ holds the built-in files themselves: counted, not listed.
        let mut builtin_files = 0;
        let mut listed = 0;
        for file in files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if let Some((name, builtin)) =
                crate::scenario::builtin().iter().find(|(n, _)| *n == stem)
            {
                if *builtin == text {
                    builtin_files += 1;
                } else {
                    listed += 1;
                    out.push_str(&format!(
                        "  {name:<22} (differs from the built-in scenario of that name, which is the one `latlab run {name}` takes; run this file by its path)\n"
                    ));
                }
                continue;
            }
            listed += 1;
            match Scenario::load(&file) {
                Ok(s) if s.name == stem => {
                    out.push_str(&format!("  {stem:<22} {}\n", s.description))
                }
                Ok(s) => out.push_str(&format!(
                    "  {stem:<22} {} (its name = \"{}\"; latlab finds it by the file name)\n",
                    s.description, s.name
                )),
                Err(e) => {
                    // The directory is named above: the file's own words are what is left.
                    let why: Vec<String> = e.chain().skip(1).map(|c| c.to_string()).collect();
                    let why = if why.is_empty() {
                        e.to_string()
                    } else {
                        why.join(": ")
                    };
                    out.push_str(&format!("  {stem:<22} (invalid: {why})\n"))
                }
            }
        }
        match (listed, builtin_files) {
            (0, 0) => out.push_str("  (no .toml files)\n"),
            (_, 0) => {}
            (_, n) => out.push_str(&format!(
                "  (and the files of {n} built-in scenarios, listed above)\n"
            )),
        }
    }
    out
}

/// Writes NAME.toml; returns its path and whether `latlab run NAME` finds it there.
fn new_scenario(a: &NewArgs, dirs: &[(PathBuf, String)]) -> anyhow::Result<(PathBuf, bool)> {
    let name = &a.name;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        anyhow::bail!(
            "'{name}' cannot be a scenario name: use letters, digits, - and _ (the file is NAME.toml)"
        );
    }
    if crate::scenario::builtin().iter().any(|(n, _)| n == name) {
        anyhow::bail!(
            "'{name}' is a built-in scenario's name, and built-in scenarios come first; choose another name"
        );
    }
    let from = Scenario::resolve_in(&a.from, dirs).with_context(|| format!("--from {}", a.from))?;
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => dirs
            .first()
            .map(|(d, _)| d.clone())
            .unwrap_or_else(|| PathBuf::from(".")),
    };
    let searched = dirs.iter().any(|(d, _)| same(d, &dir));
    let text = starting_file(name, &from, &dir, searched)?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    let path = dir.join(format!("{name}.toml"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                anyhow::anyhow!(
                    "{} already exists; latlab does not overwrite it (choose another NAME or --dir)",
                    path.display()
                )
            } else {
                anyhow::anyhow!("cannot write {}: {e}", path.display())
            }
        })?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((path, searched))
}

fn same(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The new file: a header saying what it is and how to run it, then the copied scenario with its
/// name and description changed. It is parsed before it is written.
fn starting_file(
    name: &str,
    from: &Scenario,
    dir: &std::path::Path,
    searched: bool,
) -> anyhow::Result<String> {
    let run = if searched {
        name.to_string()
    } else {
        dir.join(format!("{name}.toml")).display().to_string()
    };
    let mut out = format!(
        "# {name}: a latlab scenario, started from `{}` ({}).\n\
         #\n\
         # Run it live with `latlab tui {run}`, or headless with `latlab run {run}`;\n\
         # `latlab run {run} --duration 5s` is a quick check that it parses and runs.\n\
         #\n\
         # The sections: one per lab, {} (each lab runs when its section is\n\
         # here; the copy below shows its keys), [emulator.limits] (any service's limits) and\n\
         # [[faults]] for the embedded emulator. `latlab faults` lists the faults; `latlab profile\n\
         # list` the latency profiles. A key latlab does not know is an error naming its line.\n",
        from.name,
        if from.origin == "built-in" {
            "built in".to_string()
        } else {
            from.origin.clone()
        },
        sections(),
    );
    if from.seed.is_some() {
        out.push_str(
            "#\n# The [seed] tables below are the seed experiment's own figures, for the seed's set-up: once\n\
             # the set-up here changes, they no longer describe it; remove them then.\n",
        );
    }
    out.push('\n');
    let mut named = false;
    let mut described = false;
    let mut leading_comments = true;
    for line in from.source.lines() {
        // The copied file's own opening comments describe the scenario it was.
        if leading_comments && (line.starts_with('#') || line.trim().is_empty()) {
            continue;
        }
        leading_comments = false;
        if !named && line.starts_with("name = ") {
            out.push_str(&format!("name = \"{name}\"\n"));
            named = true;
        } else if !described && line.starts_with("description = ") {
            let description = format!("{name}, started from {}: {}", from.name, from.description);
            out.push_str(&format!(
                "description = {}\n",
                toml::Value::String(description)
            ));
            described = true;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Scenario::parse(&out, "the new file").with_context(|| {
        format!(
            "the copy of {} does not parse once renamed (its name and description lines must be top-level `name = ` and `description = `)",
            from.name
        )
    })?;
    Ok(out)
}

/// Every lab's scenario section, from the registry: `[kinesis], [s3], [redis] and [sqs]`.
fn sections() -> String {
    let names: Vec<String> = crate::labs::LabKind::ALL
        .iter()
        .map(|l| format!("[{}]", l.key()))
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}
