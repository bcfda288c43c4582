//! Just enough XML for S3: answers are written by hand (the shapes are small and fixed), and the
//! three request bodies S3 takes (CompleteMultipartUpload, DeleteObjects, CreateBucketConfiguration)
//! are read with a tag scanner that rejects what it cannot read with MalformedXML.

use super::error::S3Error;

pub const NS: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

/// Escapes text for an XML element.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Decodes the five named entities and numeric character references (`&#13;`, `&#xD;`, as the
/// SDKs write control characters in keys); anything else after `&` is malformed.
fn unescape(s: &str) -> Result<String, S3Error> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after
            .find(';')
            .filter(|e| *e <= 10)
            .ok_or_else(S3Error::malformed_xml)?;
        let entity = &after[..end];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "amp" => '&',
            _ => {
                let code =
                    if let Some(hex) = entity.strip_prefix("#x").or(entity.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok()
                    } else if let Some(dec) = entity.strip_prefix('#') {
                        dec.parse::<u32>().ok()
                    } else {
                        None
                    };
                code.and_then(char::from_u32)
                    .ok_or_else(S3Error::malformed_xml)?
            }
        };
        out.push(c);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `<tag>text</tag>` as an element.
pub fn el(tag: &str, text: impl AsRef<str>) -> String {
    format!("<{tag}>{}</{tag}>", esc(text.as_ref()))
}

/// A whole document with the declaration and S3's namespace on the root.
pub fn doc(root: &str, inner: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{root} xmlns=\"{NS}\">{inner}</{root}>")
}

/// The inner texts of every `<tag>...</tag>` (attributes allowed on the opening tag).
pub fn all<'a>(xml: &'a str, tag: &str) -> Result<Vec<&'a str>, S3Error> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        // `<Part>` must not match `<PartNumber>`.
        match after.chars().next() {
            Some('>') | Some(' ') | Some('/') => {}
            _ => {
                rest = after;
                continue;
            }
        }
        let gt = after.find('>').ok_or_else(S3Error::malformed_xml)?;
        if after[..gt].ends_with('/') {
            out.push("");
            rest = &after[gt + 1..];
            continue;
        }
        let body = &after[gt + 1..];
        let end = body.find(&close).ok_or_else(S3Error::malformed_xml)?;
        out.push(&body[..end]);
        rest = &body[end + close.len()..];
    }
    Ok(out)
}

/// The text of the first `<tag>`, unescaped, whitespace and all (an object key may begin or
/// end with spaces or line breaks).
pub fn text(xml: &str, tag: &str) -> Result<Option<String>, S3Error> {
    all(xml, tag)?.first().map(|s| unescape(s)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_elements() {
        let x = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag></Part></CompleteMultipartUpload>";
        let parts = all(x, "Part").unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(text(parts[0], "PartNumber").unwrap().as_deref(), Some("1"));
        assert_eq!(text(parts[0], "ETag").unwrap().as_deref(), Some("\"a\""));
        assert!(all("<Part><PartNumber>1", "Part").is_err());
        assert_eq!(esc("a<b&c"), "a&lt;b&amp;c");
        assert_eq!(
            text("<Key> a&#xD;&#10;&amp;b </Key>", "Key")
                .unwrap()
                .as_deref(),
            Some(" a\r\n&b ")
        );
        assert!(text("<Key>a&bogus;</Key>", "Key").is_err());
        assert!(text("<Key>a & b</Key>", "Key").is_err());
    }
}
