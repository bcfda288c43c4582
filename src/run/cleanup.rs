//! `latlab cleanup`'s search and deletions, through the registry: every lab looks for what runs
//! left of its own on the target.

use std::time::Instant;

use crate::aws::{Clients, Target};
use crate::labs::{Lab, TargetOptions};
// Every lab's module, as the registry's lines name them: a new lab needs no line here.
use crate::lab_kit::plan::leftovers::{CleanupContext, Found, Leftover};
use crate::labs::*;

/// The SDK's clients for the target (None: only Redis is looked at).
pub async fn clients(opts: &TargetOptions) -> anyhow::Result<Option<Clients>> {
    if !opts.external() {
        return Ok(None);
    }
    let clients = Clients::connect(
        &Target::Aws {
            endpoint_url: opts.endpoint_url.clone(),
            region: opts.region.clone(),
        },
        Instant::now(),
    )
    .await?;
    // A cleanup's calls give up soon: a silent endpoint must not stall it.
    Ok(Some(clients.probing(std::time::Duration::from_secs(15))))
}

/// What every lab found.
pub async fn leftovers(
    cx: &CleanupContext<'_>,
    targets: &crate::labs::target::LabTargets,
) -> Found {
    let mut all = Found::default();
    macro_rules! each {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            $(
                let f = <$module::$ty as crate::labs::Cleanup>::leftovers(cx, &targets.$module).await;
                all.items.extend(f.items);
                all.alone.extend(f.alone);
                all.notes.extend(f.notes);
                all.incomplete |= f.incomplete;
            )*
        };
    }
    crate::labs::for_each_lab!(each);
    all
}

/// Deletes one leftover, by the lab that made it.
pub async fn remove(
    cx: &CleanupContext<'_>,
    targets: &crate::labs::target::LabTargets,
    item: &Leftover,
) -> Result<(), String> {
    macro_rules! each {
        ($($kind:ident: $module:ident::$ty:ident,)*) => {
            $(
                if item.lab == <$module::$ty as Lab>::FACTS.name {
                    return <$module::$ty as crate::labs::Cleanup>::remove(cx, &targets.$module, item).await;
                }
            )*
        };
    }
    crate::labs::for_each_lab!(each);
    Err(format!("no lab named {}", item.lab))
}
