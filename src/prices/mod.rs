//! The price files as latlab reads them: each lab's sections (`Facts::prices`, in its folder)
//! through the registry, the built-in files of us-east-1 and ap-northeast-1 (compiled in;
//! nothing is fetched at run time), the file a run prices with (`--prices FILE`, else its
//! region's, else us-east-1's with a note), `latlab prices` (`listing.rs`) and `latlab prices
//! fetch` (`fetch/`). The file's data and form are `cost::prices`, below the labs; here, above
//! them, every lab's sections are given to it. It names no lab.

pub mod fetch;
pub mod listing;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::Context;

use crate::lab_kit::cost::prices::Section;
pub use crate::lab_kit::cost::prices::{Chosen, Prices};

/// The built-in price files: (region, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("us-east-1", include_str!("../../prices/us-east-1.toml")),
    (
        "ap-northeast-1",
        include_str!("../../prices/ap-northeast-1.toml"),
    ),
];

/// The region whose prices stand in when the run's region has no file.
pub const FALLBACK_REGION: &str = "us-east-1";

/// Every lab's sections of a price file, in the registry's order.
pub fn sections() -> &'static [Section] {
    static ALL: OnceLock<Vec<Section>> = OnceLock::new();
    ALL.get_or_init(|| {
        crate::labs::LabKind::ALL
            .iter()
            .flat_map(|l| l.prices().iter().copied())
            .collect()
    })
}

impl Prices {
    /// Reads a price file; the error names the file, the line and the key.
    pub fn load(path: &Path) -> anyhow::Result<Prices> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read prices file {}", path.display()))?;
        Prices::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a price file's text against every lab's sections.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Prices> {
        Prices::parse_with(text, origin, sections())
    }

    /// The built-in prices of a region, if latlab has a file for it.
    pub fn builtin(region: &str) -> Option<Arc<Prices>> {
        static PARSED: OnceLock<Vec<Arc<Prices>>> = OnceLock::new();
        PARSED
            .get_or_init(|| {
                BUILTIN
                    .iter()
                    .filter_map(|(_, text)| Prices::parse(text, "built-in").ok().map(Arc::new))
                    .collect()
            })
            .iter()
            .find(|p| p.region == region)
            .cloned()
    }

    /// The prices a run's cost uses: the file given with `--prices`, else the built-in file of
    /// the run's region, else us-east-1's with a note saying so.
    pub fn choose(given: Option<&Arc<Prices>>, region: &str) -> Option<Chosen> {
        if let Some(p) = given {
            let note = (p.region != region).then(|| {
                format!(
                    "the prices are {}'s (from {}); the run measured {region}",
                    p.region, p.origin
                )
            });
            return Some(Chosen {
                prices: p.clone(),
                note,
            });
        }
        if let Some(p) = Prices::builtin(region) {
            return Some(Chosen {
                prices: p,
                note: None,
            });
        }
        Prices::builtin(FALLBACK_REGION).map(|p| Chosen {
            prices: p,
            // A run of no AWS service (latlab's own redis-server pair) has no region to price.
            note: Some(if region.is_empty() {
                format!(
                    "the run used no AWS region (nothing it measured is in one): priced at {FALLBACK_REGION}'s list prices"
                )
            } else {
                format!("latlab has no price file for {region}; {FALLBACK_REGION}'s prices stand in")
            }),
        })
    }
}

#[cfg(test)]
mod tests;
