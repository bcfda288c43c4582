//! A replay's time cursor: where in the recording the screen is, whether it plays, and how fast.
//! Keys move it (play/pause, step a second, jump to the next or previous event, speed 1x-60x);
//! the loop advances it by the time that passed.

/// The speeds a replay steps through.
pub const SPEEDS: &[u32] = &[1, 2, 5, 10, 30, 60];

#[derive(Clone, Debug, PartialEq)]
pub struct Cursor {
    /// When the recording was made, as its header shows it.
    pub started: String,
    /// Seconds from the run's start: now, and the recording's first and last frame.
    pub at_secs: f64,
    pub first_secs: f64,
    pub last_secs: f64,
    /// The recording's events' times, in order (what n and N jump to).
    pub events: Vec<f64>,
    pub playing: bool,
    speed: usize,
}

impl Cursor {
    pub fn new(started: String, first_secs: f64, last_secs: f64, mut events: Vec<f64>) -> Cursor {
        events.sort_by(f64::total_cmp);
        Cursor {
            started,
            at_secs: first_secs,
            first_secs,
            last_secs,
            events,
            playing: true,
            speed: 0,
        }
    }

    pub fn speed(&self) -> u32 {
        SPEEDS[self.speed]
    }

    /// Sets the speed to the nearest of [`SPEEDS`] at or below `x`.
    pub fn set_speed(&mut self, x: u32) {
        self.speed = SPEEDS.iter().rposition(|s| *s <= x).unwrap_or(0);
    }

    /// `real_secs` of wall time passed: the cursor moves that much times its speed, and stops
    /// (paused) at the end.
    pub fn advance(&mut self, real_secs: f64) {
        if !self.playing {
            return;
        }
        self.at_secs = (self.at_secs + real_secs * f64::from(self.speed())).min(self.last_secs);
        if self.at_secs >= self.last_secs {
            self.playing = false;
        }
    }

    pub fn toggle(&mut self) -> String {
        if !self.playing && self.at_secs >= self.last_secs {
            // At the end, play starts again from the start.
            self.at_secs = self.first_secs;
        }
        self.playing = !self.playing;
        if self.playing {
            format!("playing at {}x", self.speed())
        } else {
            "paused: ←/→ step a second, n/N jump to an event".into()
        }
    }

    /// One second on (or back, `-1`); it pauses.
    pub fn step(&mut self, secs: f64) {
        self.playing = false;
        self.at_secs = (self.at_secs + secs).clamp(self.first_secs, self.last_secs);
    }

    /// Jumps to the next event after the cursor, and pauses there; None when there is none.
    pub fn next_event(&mut self) -> Option<f64> {
        self.playing = false;
        let next = self
            .events
            .iter()
            .copied()
            .find(|t| *t > self.at_secs + 1e-6 && *t <= self.last_secs)?;
        self.at_secs = next.max(self.first_secs);
        Some(next)
    }

    /// Jumps to the last event before the cursor (an event one second or less behind counts as
    /// the one being looked at), and pauses there.
    pub fn previous_event(&mut self) -> Option<f64> {
        self.playing = false;
        let before = self
            .events
            .iter()
            .copied()
            .rfind(|t| *t < self.at_secs - 1.0)?;
        self.at_secs = before.max(self.first_secs);
        Some(before)
    }

    pub fn faster(&mut self) -> u32 {
        self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
        self.speed()
    }

    pub fn slower(&mut self) -> u32 {
        self.speed = self.speed.saturating_sub(1);
        self.speed()
    }

    /// The start, paused.
    pub fn start(&mut self) {
        self.at_secs = self.first_secs;
        self.playing = false;
    }

    pub fn end(&mut self) {
        self.at_secs = self.last_secs;
        self.playing = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor() -> Cursor {
        Cursor::new("2026-12-01T00:00:00Z".into(), 1.0, 60.0, vec![30.0, 10.0])
    }

    #[test]
    fn it_plays_at_its_speed_and_stops_at_the_end() {
        let mut c = cursor();
        c.advance(2.0);
        assert_eq!(c.at_secs, 3.0);
        assert_eq!(c.faster(), 2);
        c.advance(2.0);
        assert_eq!(c.at_secs, 7.0);
        for _ in 0..10 {
            c.faster();
        }
        assert_eq!(c.speed(), 60);
        c.advance(10.0);
        assert_eq!((c.at_secs, c.playing), (60.0, false));
        // Play at the end starts again.
        c.toggle();
        assert_eq!((c.at_secs, c.playing), (1.0, true));
    }

    #[test]
    fn steps_pause_and_stay_inside_the_recording() {
        let mut c = cursor();
        c.step(-1.0);
        assert_eq!((c.at_secs, c.playing), (1.0, false));
        c.step(1.0);
        assert_eq!(c.at_secs, 2.0);
        c.advance(5.0);
        assert_eq!(c.at_secs, 2.0, "paused: time passing does not move it");
    }

    #[test]
    fn events_are_jumped_to_in_order() {
        let mut c = cursor();
        assert_eq!(c.next_event(), Some(10.0));
        assert_eq!(c.next_event(), Some(30.0));
        assert_eq!(c.next_event(), None);
        assert_eq!(c.at_secs, 30.0);
        assert_eq!(c.previous_event(), Some(10.0));
        assert_eq!(c.previous_event(), None);
        c.set_speed(20);
        assert_eq!(c.speed(), 10);
    }
}
