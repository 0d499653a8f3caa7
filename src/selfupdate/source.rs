//! Where the release comes from: `--from`, else `$FABLE_UPDATE_ROOT`; a directory or a
//! `file://` URL (network sources are refused by this build).

use std::path::PathBuf;

use super::error::SelfUpdateError;

/// Environment variable naming the release source when `--from` is not given.
pub const ROOT_ENV: &str = "FABLE_UPDATE_ROOT";

/// The message for `http(s)://` sources.
pub const NETWORK_REFUSED: &str = "network update sources are not supported by this build; mirror the release into a directory and use --from DIR";

/// Resolves the release source: `from` (the `--from` argument), else `$FABLE_UPDATE_ROOT`.
/// `Ok(None)` means no source is configured.
pub fn resolve_source(from: Option<&str>) -> Result<Option<PathBuf>, SelfUpdateError> {
    let env = std::env::var(ROOT_ENV).ok();
    let raw = match from.or(env.as_deref()).map(str::trim) {
        None | Some("") => return Ok(None),
        Some(s) => s,
    };
    parse_source(raw).map(Some)
}

/// Turns a directory path or URL into a local directory; network URLs are refused.
pub fn parse_source(raw: &str) -> Result<PathBuf, SelfUpdateError> {
    let lower = raw.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Err(SelfUpdateError::Network { url: raw.into() });
    }
    if lower.starts_with("file://") {
        let rest = &raw["file://".len()..];
        // `file:///dir` and `file://localhost/dir`; other hosts are not local.
        let path = if rest.starts_with('/') {
            rest
        } else if rest.to_ascii_lowercase().starts_with("localhost/") {
            &rest["localhost".len()..]
        } else {
            return Err(SelfUpdateError::Unsupported(raw.into()));
        };
        return Ok(PathBuf::from(percent_decode(path)));
    }
    if let Some(i) = raw.find("://") {
        if raw[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(SelfUpdateError::Unsupported(raw.into()));
        }
    }
    Ok(PathBuf::from(raw))
}

/// Decodes `%XX` escapes of a `file://` URL path (invalid escapes are kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hexpair = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hexpair {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_local_only() {
        assert!(matches!(
            parse_source("https://example.com/r"),
            Err(SelfUpdateError::Network { .. })
        ));
        assert!(matches!(
            parse_source("HTTP://example.com/r"),
            Err(SelfUpdateError::Network { .. })
        ));
        assert!(matches!(
            parse_source("ftp://example.com/r"),
            Err(SelfUpdateError::Unsupported(_))
        ));
        assert_eq!(
            parse_source("file:///tmp/a%20b").unwrap(),
            PathBuf::from("/tmp/a b")
        );
        assert_eq!(
            parse_source("file://localhost/tmp/r").unwrap(),
            PathBuf::from("/tmp/r")
        );
        assert_eq!(parse_source("rel/dir").unwrap(), PathBuf::from("rel/dir"));
    }
}
