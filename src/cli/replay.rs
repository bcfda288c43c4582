//! `latlab replay DIR`: a recording played back in the TUI, or (with --headless) its tables at
//! a moment.

use super::*;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A recording's directory (made with --record)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print the tables at --at (default: the recording's end) instead of opening the TUI
    #[arg(long)]
    pub headless: bool,
    /// Where to start (or, headless, the moment whose tables to print), from the run's start,
    /// e.g. 90s or 2m
    #[arg(long, value_name = "DURATION", value_parser = latlab_core::units::parse_duration)]
    pub at: Option<std::time::Duration>,
    /// Playing speed: 1, 2, 5, 10, 30 or 60 (x real time)
    #[arg(long, default_value_t = 1, value_parser = parse_speed)]
    pub speed: u32,
    /// Headless: the tables' format
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Headless: write the tables here instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour theme: dark, light, mono, or a theme file (NO_COLOR selects mono)
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_THEME")]
    pub theme: Option<String>,
    /// Write the screen at --at (default: the end) as an SVG image instead of opening the TUI
    #[arg(long, value_name = "FILE", conflicts_with = "headless")]
    pub screenshot: Option<PathBuf>,
    /// --screenshot's size in cells
    #[arg(long, value_name = "COLSxROWS", value_parser = crate::tui::screenshot::parse_size, default_value = "120x40")]
    pub size: (u16, u16),
    /// Frames per second
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=60))]
    pub fps: u32,
    /// Price the printed report with this price file instead of the built-in file of the run's
    /// region
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub share: ShareArgs,
}

pub(super) fn parse_speed(s: &str) -> Result<u32, String> {
    let x: u32 = s
        .trim_end_matches('x')
        .parse()
        .map_err(|_| format!("'{s}' is not a speed: valid speeds are 1, 2, 5, 10, 30, 60"))?;
    if crate::tui::cursor::SPEEDS.contains(&x) {
        Ok(x)
    } else {
        Err(format!(
            "{x}x is not a speed: valid speeds are 1, 2, 5, 10, 30, 60"
        ))
    }
}

pub(super) fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let prices = match super::load_prices(args.prices.as_deref())? {
        Some(p) => Some(p),
        None => crate::record::recorded_prices(&args.dir)?,
    };
    let rec = crate::record::Recording::open(&args.dir)?;
    let at = args.at.map(|d| d.as_secs_f64());
    if let Some(a) = at
        && a > rec.at_secs(rec.len() - 1) + 1.0
    {
        anyhow::bail!(
            "--at {}: the recording {} runs to {}",
            latlab_core::units::clock(a),
            args.dir.display(),
            latlab_core::units::clock(rec.at_secs(rec.len() - 1))
        );
    }
    // Before the first frame (the recording starts once the labs have): the first frame is
    // shown, and said to be.
    if let Some(a) = at
        && a < rec.at_secs(0)
        && (args.headless || args.screenshot.is_some())
    {
        eprintln!(
            "latlab: --at {}: the recording's first second is {}; showing that second",
            latlab_core::units::clock(a),
            latlab_core::units::clock(rec.at_secs(0))
        );
    }
    let write = |text: String| -> anyhow::Result<()> {
        match &args.output {
            Some(path) => std::fs::write(path, text)
                .with_context(|| format!("cannot write --output {}", path.display())),
            None => {
                let mut out = std::io::stdout().lock();
                let _ = std::io::Write::write_all(&mut out, text.as_bytes());
                Ok(())
            }
        }
    };
    if args.share.share_control {
        anyhow::bail!(
            "--share-control: a replay changes no experiment, so there is no control to grant; share it read-only"
        );
    }
    if args.share.share.is_some() && (args.headless || args.screenshot.is_some()) {
        anyhow::bail!(
            "--share shares the replay's screen as it plays; it does not go with --headless or --screenshot"
        );
    }
    if args.headless {
        // Every frame up to the moment is read, as the TUI would play it: a damaged one is an
        // error here, not a surprise later.
        let last = at.map_or(rec.len() - 1, |a| rec.frame_at(a));
        for i in 0..=last {
            rec.snapshot(i)?;
        }
        write(
            rec.report(last)?
                .with_prices(prices.clone())
                .render(args.format),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &args.screenshot {
        let theme = Theme::resolve(args.theme.as_deref().unwrap_or("dark"))?;
        let svg = crate::tui::replay::screenshot(&rec, theme, at, args.size)?;
        std::fs::write(path, svg)
            .with_context(|| format!("cannot write --screenshot {}", path.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let theme = Theme::for_terminal(args.theme.as_deref())?;
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!(
            "a replay needs a terminal; for scripts use `latlab replay {} --headless`",
            args.dir.display()
        );
    }
    let share = args.share.open()?;
    let report = crate::tui::replay::run(crate::tui::replay::ReplayOptions {
        recording: rec,
        theme,
        fps: args.fps,
        at_secs: at,
        speed: args.speed,
        share,
    })?;
    write(report.with_prices(prices).render(Format::Text))?;
    Ok(ExitCode::SUCCESS)
}
