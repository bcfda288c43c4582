//! Running on a real account safely: `latlab plan` (and `run --dry-run`), the confirmation a run
//! on AWS asks before it creates anything billed, `--max-cost`, and `latlab iam-policy`.

use super::*;

/// How a plan is written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlanFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// A built-in scenario, one in the scenario directories, or a scenario file
    #[arg(value_name = "SCENARIO", required_unless_present = "scenario", value_parser = ScenarioName, hide_possible_values = true)]
    pub name: Option<String>,
    /// A scenario file
    #[arg(long, value_name = "FILE", conflicts_with = "name")]
    pub scenario: Option<PathBuf>,
    /// The run's length the total is priced for [default: the scenario's]
    #[arg(long, value_name = "DURATION", value_parser = latlab_core::units::parse_duration)]
    pub duration: Option<std::time::Duration>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// Price with this price file instead of the built-in file of the region
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct IamPolicyArgs {
    /// A built-in scenario, one in the scenario directories, or a scenario file
    #[arg(value_name = "SCENARIO", required_unless_present = "scenario", value_parser = ScenarioName, hide_possible_values = true)]
    pub name: Option<String>,
    /// A scenario file
    #[arg(long, value_name = "FILE", conflicts_with = "name")]
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// What a run on a real account is allowed to cost and whether it may go on without asking.
#[derive(Args, Debug, Clone, Default)]
pub struct SpendArgs {
    /// Stop the run before its configuration's list-price cost would pass this many US dollars
    /// (it cleans up and says why in the report and the recording)
    #[arg(long, value_name = "USD", value_parser = parse_cost, env = "LATLAB_MAX_COST")]
    pub max_cost: Option<f64>,
    /// With --aws, go on without asking before creating billed resources
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// A cost cap: a positive number of dollars (`0.50`, `$2`).
pub fn parse_cost(text: &str) -> Result<f64, String> {
    let t = text.trim().trim_start_matches('$');
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a cost cap: write a positive amount of US dollars, e.g. 0.50 or 2"
        )),
    }
}

/// The plan of a scenario on a target, made on a runtime of its own.
pub(super) fn make_plan(
    scenario: &Scenario,
    opts: &TargetOptions,
    prices: Option<&std::sync::Arc<crate::lab_kit::cost::Prices>>,
    duration: std::time::Duration,
    run_id: &str,
) -> anyhow::Result<crate::lab_kit::plan::Plan> {
    runtime()?.block_on(crate::run::plan::plan(
        scenario, opts, prices, duration, run_id,
    ))
}

pub(super) fn plan(args: PlanArgs, dirs: &[(PathBuf, String)]) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    let scenario = load_scenario(args.name.as_deref(), args.scenario.as_deref(), dirs)?;
    let prices = load_prices(args.prices.as_deref())?;
    let duration = args.duration.unwrap_or(scenario.duration);
    let run_id = crate::run::plan::new_run_id();
    let plan = make_plan(
        &scenario,
        &args.target.options(),
        prices.as_ref(),
        duration,
        &run_id,
    )?;
    print_plan(&plan, args.format);
    Ok(if plan.problems().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub(super) fn print_plan(plan: &crate::lab_kit::plan::Plan, format: PlanFormat) {
    match format {
        PlanFormat::Text => out!("{}", plan.text()),
        PlanFormat::Json => out!(
            "{}\n",
            serde_json::to_string_pretty(&plan.json()).unwrap_or_default()
        ),
    }
}

pub(super) fn iam_policy(
    args: IamPolicyArgs,
    dirs: &[(PathBuf, String)],
) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    let scenario = load_scenario(args.name.as_deref(), args.scenario.as_deref(), dirs)?;
    // The policy needs no call: the plan is made without reaching the endpoint.
    let plan = runtime()?.block_on(crate::run::plan::offline(&scenario, &args.target.options()))?;
    for line in crate::lab_kit::plan::iam::outside(&plan) {
        eprintln!("note: {line}");
    }
    for line in plan.problems() {
        eprintln!("note: {line}; the policy names placeholders for what is missing");
    }
    out!("{}", crate::lab_kit::plan::iam::policy_text(&plan));
    Ok(ExitCode::SUCCESS)
}

/// Before a run on a real account creates anything billed: the plan's cost line and a question
/// on the terminal; `--yes` answers it; with no terminal and no `--yes`, the run is refused
/// and the plan printed. Returns the run id the plan named (the run uses it), None when the
/// target is not a real account.
pub(super) fn confirm(
    scenario: &Scenario,
    opts: &TargetOptions,
    prices: Option<&std::sync::Arc<crate::lab_kit::cost::Prices>>,
    spend: &SpendArgs,
    duration: std::time::Duration,
) -> anyhow::Result<Option<String>> {
    if !opts.aws {
        return Ok(None);
    }
    let run_id = crate::run::plan::new_run_id();
    let plan = make_plan(scenario, opts, prices, duration, &run_id)?;
    let problems = plan.problems();
    if !problems.is_empty() {
        eprint!("{}", plan.text());
        anyhow::bail!("the run cannot go as planned: {}", problems.join("; "));
    }
    if !plan.creates_billable() || spend.yes {
        if plan.creates_billable() {
            eprintln!("{} (--yes: going on)", plan.cost_line());
        }
        return Ok(Some(run_id));
    }
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    if !terminal {
        eprint!("{}", plan.text());
        anyhow::bail!(
            "this run creates billed resources on your AWS account ({}); there is no terminal to ask on, so it does not start: pass --yes to go on (see the plan above; `latlab plan` prints it again)",
            plan.cost_line()
        );
    }
    let created: Vec<String> = plan
        .labs
        .iter()
        .flat_map(|l| l.creates.iter().filter(|r| r.billable))
        .map(|r| format!("{} {}", r.kind, r.name))
        .collect();
    eprintln!(
        "this run creates on AWS {}: {}",
        plan.region,
        created.join(", ")
    );
    eprintln!("{}", plan.cost_line());
    if let Some(cap) = spend.max_cost {
        eprintln!(
            "it stops before passing --max-cost {}",
            crate::lab_kit::cost::usd(cap)
        );
    }
    eprint!("create them and run? [y/N] ");
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .context("cannot read the answer")?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        Ok(Some(run_id))
    } else {
        anyhow::bail!("not run: nothing was created")
    }
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    /// Only what runs older than this left (e.g. 1h, 2d); a resource of unknown age is left
    /// for --run to name
    #[arg(long, value_name = "DURATION", value_parser = latlab_core::units::parse_duration)]
    pub older_than: Option<std::time::Duration>,
    /// Only what this run left (its id: 8 hex digits, as its names and tags carry it)
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Delete what is listed (without it, nothing is deleted)
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub(super) fn cleanup(args: CleanupArgs) -> anyhow::Result<ExitCode> {
    use crate::lab_kit::plan::leftovers::{CleanupContext, Filter, age, run_id_of};
    args.target.check()?;
    let opts = args.target.options();
    let (keeps, named) = opts.labs.kept();
    if !opts.external() && !named {
        let places: Vec<String> = std::iter::once("an endpoint (--endpoint-url URL or --aws)")
            .chain(keeps.iter().copied())
            .map(str::to_string)
            .collect();
        anyhow::bail!(
            "cleanup looks on {}: the embedded emulator and latlab's own servers keep nothing after latlab exits",
            places.join(" or ")
        );
    }
    if let Some(run) = &args.run
        && run_id_of(run).is_none()
    {
        anyhow::bail!(
            "--run '{run}' is not a run id: a run id is 8 lowercase hex digits, as in latlab-demo-latlab-0a1b2c3d"
        );
    }
    let filter = Filter {
        run: args.run.clone(),
        older_than: args.older_than,
    };
    runtime()?.block_on(async {
        let clients = crate::run::cleanup::clients(&opts).await?;
        let shown = opts.plan_target();
        let cx = CleanupContext {
            target: &shown,
            clients: clients.as_ref(),
        };
        let found = crate::run::cleanup::leftovers(&cx, &opts.labs).await;
        let now = std::time::SystemTime::now();
        let where_ = match (&opts.endpoint_url, &clients) {
            (Some(url), Some(c)) => format!("endpoint {url} ({})", c.region()),
            (None, Some(c)) => format!("AWS {}", c.region()),
            _ => "Redis".to_string(),
        };
        let (chosen, others): (Vec<_>, Vec<_>) =
            found.items.iter().partition(|i| filter.keeps(i, now));
        if let Some(run) = &args.run
            && chosen.is_empty()
        {
            let mut runs: Vec<&str> = found.items.iter().map(|i| i.run_id.as_str()).collect();
            runs.sort();
            runs.dedup();
            anyhow::bail!(
                "--run {run} matches nothing latlab left on {where_}; {}",
                if runs.is_empty() {
                    "no run left anything there".to_string()
                } else {
                    format!("runs that left resources: {}", runs.join(", "))
                }
            );
        }
        out!("cleanup on {where_}\n");
        for n in &found.notes {
            out!("note: {n}\n");
        }
        let mut runs: Vec<&str> = chosen.iter().map(|i| i.run_id.as_str()).collect();
        runs.sort();
        runs.dedup();
        for run in &runs {
            let items: Vec<_> = chosen.iter().filter(|i| i.run_id == *run).collect();
            let created = items.iter().filter_map(|i| i.created).min();
            out!(
                "run {run} ({}{}):\n",
                created.map_or_else(
                    || "created at an unknown time".to_string(),
                    |c| format!("created {}", humantime::format_rfc3339_seconds(c))
                ),
                if created.is_some() {
                    format!(", {}", age(created, now))
                } else {
                    String::new()
                }
            );
            for i in items {
                out!("  {} {} {}: {}\n", i.lab, i.kind, i.name, i.detail);
            }
        }
        if !others.is_empty() {
            out!(
                "not chosen ({}): {} resource{} of other runs or younger ones, kept\n",
                match (&filter.run, filter.older_than) {
                    (Some(r), _) => format!("--run {r}"),
                    (None, Some(d)) =>
                        format!("--older-than {}", latlab_core::units::format_duration(d)),
                    _ => String::new(),
                },
                others.len(),
                if others.len() == 1 { "" } else { "s" }
            );
        }
        for a in &found.alone {
            out!("left alone: {} {} {}: {}\n", a.lab, a.kind, a.name, a.why);
        }
        if chosen.is_empty() {
            out!(
                "nothing latlab left{}\n",
                if found.incomplete {
                    " was found (the search was not complete: see the notes)"
                } else {
                    " to delete"
                }
            );
            return Ok(if found.incomplete {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
        }
        if !args.yes {
            out!(
                "nothing deleted: pass --yes to delete the {} resource{} above\n",
                chosen.len(),
                if chosen.len() == 1 { "" } else { "s" }
            );
            return Ok(ExitCode::SUCCESS);
        }
        let mut failed = Vec::new();
        for i in &chosen {
            match crate::run::cleanup::remove(&cx, &opts.labs, i).await {
                Ok(()) => out!("deleted {} {} {}\n", i.lab, i.kind, i.name),
                Err(why) => {
                    out!("could not delete {} {} {}: {why}\n", i.lab, i.kind, i.name);
                    failed.push(i);
                }
            }
        }
        if failed.is_empty() {
            out!(
                "deleted {} resource{}\n",
                chosen.len(),
                if chosen.len() == 1 { "" } else { "s" }
            );
            Ok(ExitCode::SUCCESS)
        } else {
            out!(
                "{} of {} not deleted, still there: run `latlab cleanup --yes` again to finish\n",
                failed.len(),
                chosen.len()
            );
            Ok(ExitCode::FAILURE)
        }
    })
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PricesArgs {
    /// A region with a built-in price file, or a price file
    #[arg(value_name = "REGION|FILE")]
    pub region: Option<String>,
    #[command(subcommand)]
    pub command: Option<PricesCommand>,
}

#[derive(Subcommand, Debug)]
pub enum PricesCommand {
    /// Read the prices from AWS's Price List API (the bulk offer files of AmazonKinesis, AmazonS3
    /// and AmazonElastiCache) and write a price file; a failed fetch writes nothing
    Fetch {
        /// A region to fetch (repeatable) [default: us-east-1]
        #[arg(long = "region", value_name = "REGION")]
        regions: Vec<String>,
        /// Where to write: a file for one region (default REGION.toml), a directory for several
        #[arg(long, short, value_name = "FILE|DIR")]
        output: Option<PathBuf>,
        /// The Price List's host
        #[arg(long, value_name = "URL", default_value = crate::prices::fetch::DEFAULT_URL)]
        price_list_url: String,
    },
}

pub(super) fn prices(args: PricesArgs) -> anyhow::Result<ExitCode> {
    match args {
        PricesArgs {
            command:
                Some(PricesCommand::Fetch {
                    regions,
                    output,
                    price_list_url,
                }),
            ..
        } => {
            let regions = if regions.is_empty() {
                vec!["us-east-1".to_string()]
            } else {
                regions
            };
            let written = runtime()?.block_on(crate::prices::fetch::fetch(
                &price_list_url,
                &regions,
                output.as_deref(),
            ))?;
            for path in written {
                eprintln!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        PricesArgs { region: None, .. } => {
            out!("{}", crate::prices::listing::regions_listing());
            Ok(ExitCode::SUCCESS)
        }
        PricesArgs {
            region: Some(region),
            ..
        } => {
            let prices = match crate::lab_kit::cost::Prices::builtin(&region) {
                Some(p) => p,
                None if std::path::Path::new(&region).exists() || region.ends_with(".toml") => {
                    std::sync::Arc::new(crate::lab_kit::cost::Prices::load(std::path::Path::new(
                        &region,
                    ))?)
                }
                None => anyhow::bail!(
                    "no built-in price file for '{region}': latlab has {}; or name a price file",
                    crate::prices::BUILTIN
                        .iter()
                        .map(|(r, _)| *r)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out!("{}", prices.listing());
            Ok(ExitCode::SUCCESS)
        }
    }
}
