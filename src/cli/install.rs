//! What installing latlab needs from it: shell completions and the man page.

use super::*;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish or powershell (elvish too)
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
}

/// The man page: latlab's, then a section per command with its options.
pub(super) fn man_page(out: &mut Vec<u8>) -> anyhow::Result<()> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    for sub in cmd.get_subcommands() {
        let name = format!("latlab {}", sub.get_name());
        let sub = sub.clone().name(name.clone()).bin_name(name);
        let page = clap_mangen::Man::new(sub.clone());
        // Each command's synopsis and options, under its own heading.
        let mut part = Vec::new();
        page.render_synopsis_section(&mut part)?;
        page.render_description_section(&mut part)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.render_options_section(&mut part)?;
        }
        if sub.has_subcommands() {
            page.render_subcommands_section(&mut part)?;
        }
        let part = String::from_utf8_lossy(&part)
            .replace(".SH SYNOPSIS", &format!(".SH \\fB{}\\fR", sub.get_name()))
            .replace(".SH DESCRIPTION\n", ".PP\n")
            .replace(".SH OPTIONS", ".SS Options")
            .replace(".SH SUBCOMMANDS", ".SS Commands");
        out.extend_from_slice(part.as_bytes());
    }
    out.extend_from_slice(man_files_and_environment().as_bytes());
    man.render_version_section(out)?;
    Ok(())
}

/// The config file and the variables that set options, from the config keys' table.
fn man_files_and_environment() -> String {
    let mut s = String::from(
        ".SH FILES\n.TP\n\\fI$XDG_CONFIG_HOME/latlab/config.toml\\fR (\\fI~/.config/latlab/config.toml\\fR)\n\
         Defaults for the options below, one key per option (\\fBlatency_profile\\fR for \\fB\\-\\-latency\\-profile\\fR); \
         \\fBlatlab config show\\fR prints each option's value and where it came from.\n\
         .SH ENVIRONMENT\nA flag beats its variable, which beats the config file.\n\
         .TP\n\\fBLATLAB_CONFIG\\fR\nThe config file to read (as \\fB\\-\\-config\\fR).\n",
    );
    for key in crate::config::keys() {
        if let Some(env) = key.env {
            let sets = if key.arg.is_empty() {
                format!(
                    "The config key \\fB{}\\fR, directories separated by :",
                    key.name
                )
            } else {
                format!(
                    "Sets \\fB\\-\\-{}\\fR (config key \\fB{}\\fR)",
                    key.arg.replace('_', "\\-"),
                    key.name
                )
            };
            s.push_str(&format!(
                ".TP\n\\fB{env}\\fR\n{sets}; default: {}.\n",
                key.builtin
            ));
        }
    }
    s.push_str(".TP\n\\fBNO_COLOR\\fR\nSelects the mono theme when no theme is set.\n");
    s.push_str(".TP\n\\fBLATLAB_LOG\\fR\nWhat the log file records: levels by target (default: info), e.g. \\fBlatlab=debug,hyper=warn\\fR.\n");
    s
}
