//! A small table: aligned plain text for terminals and logs, pipe tables for Markdown.

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// How many leading columns are labels (left-aligned); the rest are figures.
    pub labels: usize,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            labels: 1,
        }
    }

    /// The first `n` columns are labels, aligned left.
    pub fn labels(mut self, n: usize) -> Table {
        self.labels = n;
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
        }
        w
    }

    /// The label columns left-aligned, the figures right-aligned, two spaces apart.
    pub fn text(&self) -> String {
        let w = self.widths();
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, width) in w.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                if i == 0 {
                    out.push_str(&format!("{cell:<width$}"));
                } else if i < self.labels {
                    out.push_str(&format!("  {cell:<width$}"));
                } else {
                    out.push_str(&format!("  {cell:>width$}"));
                }
            }
            out.trim_end().to_string()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let total: usize = w.iter().sum::<usize>() + 2 * (w.len().saturating_sub(1));
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out.push('|');
        for i in 0..self.headers.len() {
            out.push_str(if i < self.labels.max(1) {
                "---|"
            } else {
                "---:|"
            });
        }
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = (0..self.headers.len())
                .map(|i| esc(r.get(i).map(String::as_str).unwrap_or("")))
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let mut t = Table::new(&["consumer", "p50"]);
        t.row(vec!["Lambda EFO".into(), "68.3 ms".into()]);
        t.row(vec!["x".into(), "1,364.7 ms".into()]);
        assert_eq!(
            t.text(),
            "consumer           p50\n----------------------\nLambda EFO     68.3 ms\nx           1,364.7 ms\n"
        );
        assert_eq!(t.markdown().lines().nth(1), Some("|---|---:|"));
    }
}
