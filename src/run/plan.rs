//! A run's plan, before the run (`latlab plan`, `latlab run --dry-run`, the confirmation on a
//! real account): each of the scenario's labs says what it would create, use and call, through
//! the registry, on the target the run would measure. Nothing is created.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::aws::{Clients, Target};
use crate::lab_kit::cost::Prices;
use crate::labs::TargetOptions;
// Every lab's module, as the registry's lines name them: a new lab needs no line here.
use crate::lab_kit::plan::{LabPlan, Plan, PlanContext};
use crate::labs::*;
use crate::scenario::Scenario;

/// The plan of a run of `scenario` on `opts`'s target for `duration`, its names carrying
/// `run_id`, priced with `prices` (else the region's built-in file).
pub async fn plan(
    scenario: &Scenario,
    opts: &TargetOptions,
    prices: Option<&Arc<Prices>>,
    duration: Duration,
    run_id: &str,
) -> anyhow::Result<Plan> {
    let aws_labs = super::scenario_labs(scenario)
        .iter()
        .any(|l| l.service().is_some_and(|s| s.emulated()));
    let clients = if opts.external() && aws_labs {
        Some(
            Clients::connect(
                &Target::Aws {
                    endpoint_url: opts.endpoint_url.clone(),
                    region: opts.region.clone(),
                },
                Instant::now(),
            )
            .await?,
        )
    } else {
        None
    };
    let region = match &clients {
        Some(c) => c.region(),
        None => opts
            .region
            .clone()
            .unwrap_or_else(|| crate::aws::EMULATOR_REGION.into()),
    };
    let chosen = Prices::choose(prices, &region).ok_or_else(|| {
        anyhow::anyhow!("no price file for {region}, and no built-in to stand in")
    })?;
    // Probes of a plan give up soon: a silent endpoint must not stall it.
    let probing = clients.as_ref().map(|c| c.probing(Duration::from_secs(10)));
    let shown = opts.plan_target();
    let cx = PlanContext {
        target: &shown,
        run_id,
        region: region.clone(),
        prices: &chosen.prices,
        clients: probing.as_ref(),
        duration,
    };
    let head = match (&opts.endpoint_url, opts.aws) {
        (Some(url), _) => (format!("endpoint {url} ({region})"), false),
        (None, true) => (format!("AWS {region} (your account, billed)"), true),
        (None, false) => (
            "the embedded emulator (nothing on any account; priced as if on AWS)".into(),
            false,
        ),
    };
    labs_plan(&cx, scenario, &opts.labs, &chosen, head).await
}

/// Each of the scenario's labs' part of the plan on `cx`, put together.
pub async fn labs_plan(
    cx: &PlanContext<'_>,
    scenario: &Scenario,
    targets: &crate::labs::target::LabTargets,
    chosen: &crate::lab_kit::cost::Chosen,
    head: (String, bool),
) -> anyhow::Result<Plan> {
    let mut labs: Vec<LabPlan> = Vec::new();
    macro_rules! each {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            $(
                if let Some(s) = &scenario.$module {
                    labs.push(<$module::$ty as crate::labs::Planned>::plan(cx, s, &targets.$module).await);
                }
            )*
        };
    }
    crate::labs::for_each_lab!(each);
    Ok(Plan::new(&scenario.name, head, cx, labs, chosen))
}

/// The run id a run made now would carry (`latlab plan` names its resources with it; the run
/// makes its own).
pub fn new_run_id() -> String {
    crate::labs::run_id()
}

/// A plan made without any call (`latlab iam-policy`'s, the doctor's): its resources named as
/// on AWS (a run id's place a wildcard), nothing checked.
pub async fn offline(scenario: &Scenario, opts: &TargetOptions) -> anyhow::Result<Plan> {
    let region = opts
        .region
        .clone()
        .or_else(|| std::env::var("AWS_REGION").ok())
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok());
    let mut shown = opts.clone();
    shown.region = region.clone();
    if !shown.external() {
        shown.aws = true;
    }
    let target = shown.plan_target();
    let chosen = Prices::choose(None, region.as_deref().unwrap_or("us-east-1"))
        .ok_or_else(|| anyhow::anyhow!("no built-in price file"))?;
    let cx = PlanContext {
        target: &target,
        run_id: "*",
        region: region.clone().unwrap_or_else(|| "*".into()),
        prices: &chosen.prices,
        clients: None,
        duration: scenario.duration,
    };
    let head = (format!("AWS {}", cx.region), true);
    labs_plan(&cx, scenario, &opts.labs, &chosen, head).await
}
