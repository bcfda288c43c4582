//! Where a key is in a price file's text: its line, for errors found after parsing, and the
//! dotted key at a line, for toml's errors.

/// The line of `key` in the table `[section]` of `text`, for errors found after parsing.
pub(super) fn line_of_key(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(header) = t.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = header.trim().to_string();
        } else if current == section
            && let Some((k, _)) = t.split_once('=')
            && k.trim().trim_matches('"') == key
        {
            return Some(i + 1);
        }
    }
    None
}

/// The dotted key at a line of `text` (`kinesis.shard_hour`), for toml's errors.
pub(super) fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(header) = t.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = header.trim().to_string();
            if i + 1 == line {
                return Some(current);
            }
        } else if i + 1 == line {
            let key = t.split_once('=').map(|(k, _)| k.trim().trim_matches('"'))?;
            return Some(if current.is_empty() {
                key.to_string()
            } else {
                format!("{current}.{key}")
            });
        }
    }
    None
}
