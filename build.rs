//! Puts the git commit latlab was built from into `latlab --version`.
//!
//! `LATLAB_GIT_COMMIT` names it for builds outside a checkout (a source tarball, a package);
//! otherwise `git` is asked, and a build where neither answers says `unknown commit`.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=LATLAB_GIT_COMMIT");
    let commit = std::env::var("LATLAB_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    // Build again when HEAD moves: HEAD itself, the branch it points at, and packed refs.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("packed-refs").display()
        );
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let common = git(&["rev-parse", "--git-common-dir"])
                .map(PathBuf::from)
                .unwrap_or(dir);
            println!("cargo:rerun-if-changed={}", common.join(branch).display());
        }
    }
    let date = git(&["log", "-1", "--format=%cs", "HEAD"]);
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let long = match (commit, date) {
        (Some(c), Some(d)) => format!("{version} (commit {c}, {d})"),
        (Some(c), None) => format!("{version} (commit {c})"),
        _ => format!("{version} (unknown commit)"),
    };
    println!("cargo:rustc-env=LATLAB_LONG_VERSION={long}");
}
