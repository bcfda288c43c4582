//! A profile's links: one-way delays between hosts that the emulator does not serve but a program
//! shaping connections of its own plays (the Redis lab's own servers: `links.redis-replication`,
//! `links.redis-client`). The emulator reads them, lists them with their provenance and never
//! applies them. No built-in profile has any: a link's delay belongs to where it was measured,
//! and `latlab calibrate` writes those it measured. A file writes each as a delay:
//! `[links]` then `NAME = { min_ms = 0.3, median_ms = 0.45, p99_ms = 1.2 }`.

use std::collections::BTreeMap;

use anyhow::bail;
use latlab_core::shaping::dist::{Dist, DistSpec};

/// Its parameters, `links.NAME`, with their values in words.
pub(super) fn values(links: &BTreeMap<String, Dist>) -> Vec<(String, String)> {
    links
        .iter()
        .map(|(name, d)| (format!("links.{name}"), format!("{} one way", d.describe())))
        .collect()
}

/// A file's `[links]`: each name checked (lower-case letters, digits and `-`) and its delay
/// built; the parameters set.
pub(super) fn apply(
    links: &mut BTreeMap<String, Dist>,
    spec: BTreeMap<String, DistSpec>,
) -> anyhow::Result<Vec<String>> {
    let mut set = Vec::new();
    for (name, d) in spec {
        let well_formed = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !well_formed {
            bail!(
                "links.{name}: a link's name is lower-case letters, digits and '-' (such as replica-link)"
            );
        }
        let field = format!("links.{name}");
        links.insert(name, d.build(&field)?);
        set.push(field);
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use crate::profile::LatencyProfile;

    #[test]
    fn a_files_links_are_parameters_with_their_provenance() {
        let p = LatencyProfile::from_toml(
            "name = \"mine\"\nbase = \"same-region\"\n\
             [links]\nredis-replication = { min_ms = 0.3, median_ms = 0.45, p99_ms = 1.2 }\n\
             [provenance.\"links.redis-replication\"]\nsource = \"measurement\"\nnote = \"WAIT round trips\"\n",
        )
        .unwrap();
        let link = &p.links["redis-replication"];
        assert_eq!(link.median_ms(), 0.45);
        let param = p
            .params()
            .into_iter()
            .find(|x| x.name == "links.redis-replication")
            .unwrap();
        assert!(
            param
                .value
                .starts_with("min 0.3 ms, median 0.45 ms, p99 1.2 ms")
        );
        assert!(param.value.ends_with("one way"));
        assert_eq!(param.provenance.source.name(), "measurement");
        // A built-in profile has none.
        assert!(LatencyProfile::same_region().links.is_empty());
        assert!(
            !LatencyProfile::same_region()
                .params()
                .iter()
                .any(|x| x.name.starts_with("links."))
        );
    }

    #[test]
    fn a_bad_link_is_named() {
        let e =
            LatencyProfile::from_toml("name = \"x\"\n[links]\n\"Redis Link\" = { fixed_ms = 1 }\n")
                .unwrap_err();
        assert!(format!("{e:#}").contains("links.Redis Link: a link's name is lower-case"));
        let e =
            LatencyProfile::from_toml("name = \"x\"\n[links]\nredis-client = { median_ms = 2 }\n")
                .unwrap_err();
        assert!(
            format!("{e:#}").contains("links.redis-client must be { fixed_ms = N }"),
            "{e:#}"
        );
    }
}
