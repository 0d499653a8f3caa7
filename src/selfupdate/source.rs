//! Where the release comes from (docs/design.md, "Update"): `--from`, else
//! `$FABLE_UPDATE_ROOT`; a directory or `file://` URL holding `manifest.json`, the `https://`
//! URL of a `manifest.json` (same format), or `github:OWNER/REPO` (the GitHub releases API at
//! `$FABLE_GITHUB_API_URL`, default `https://api.github.com`). Plain `http://` is refused
//! except to loopback (the tests' servers).

use std::fmt;
use std::path::PathBuf;

use super::error::SelfUpdateError;
use super::manifest::MANIFEST_NAME;

/// Environment variable naming the release source when `--from` is not given.
pub const ROOT_ENV: &str = "FABLE_UPDATE_ROOT";

/// Environment variable overriding the GitHub API base URL (GitHub Enterprise, tests).
pub const GITHUB_API_ENV: &str = "FABLE_GITHUB_API_URL";

/// The public GitHub API.
pub const GITHUB_API: &str = "https://api.github.com";

/// A release source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A local directory holding `manifest.json` and the archive it names.
    Dir(PathBuf),
    /// The URL of a `manifest.json`; the archive it names is resolved against it.
    Url(String),
    /// The latest release of a GitHub repository, read through the API at `api`.
    GitHub {
        /// Repository owner.
        owner: String,
        /// Repository name.
        repo: String,
        /// API base URL, without a trailing slash.
        api: String,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Dir(d) => write!(f, "{}", d.display()),
            Source::Url(u) => f.write_str(u),
            Source::GitHub { owner, repo, api } if api == GITHUB_API => {
                write!(f, "github:{owner}/{repo}")
            }
            Source::GitHub { owner, repo, api } => write!(f, "github:{owner}/{repo} ({api})"),
        }
    }
}

/// Resolves the release source: `from` (the `--from` argument), else `$FABLE_UPDATE_ROOT`.
/// `Ok(None)` means no source is configured.
pub fn resolve_source(from: Option<&str>) -> Result<Option<Source>, SelfUpdateError> {
    let env = std::env::var(ROOT_ENV).ok();
    let raw = match from.or(env.as_deref()).map(str::trim) {
        None | Some("") => return Ok(None),
        Some(s) => s,
    };
    let api = std::env::var(GITHUB_API_ENV).ok();
    parse_source(raw, api.as_deref()).map(Some)
}

/// Turns a `--from` value into a source; `github_api` overrides the GitHub API base URL.
pub fn parse_source(raw: &str, github_api: Option<&str>) -> Result<Source, SelfUpdateError> {
    let lower = raw.to_ascii_lowercase();
    if let Some(repo) = raw.strip_prefix("github:") {
        let (owner, name) = repo
            .split_once('/')
            .filter(|(o, n)| valid_name(o) && valid_name(n))
            .ok_or_else(|| SelfUpdateError::Unsupported(raw.into()))?;
        let api = github_api
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(GITHUB_API);
        check_url(api)?;
        return Ok(Source::GitHub {
            owner: owner.into(),
            repo: name.into(),
            api: api.trim_end_matches('/').into(),
        });
    }
    if lower.starts_with("http://") || lower.starts_with("https://") {
        check_url(raw)?;
        let url = if lower.ends_with(".json") {
            raw.to_string()
        } else {
            format!("{}/{MANIFEST_NAME}", raw.trim_end_matches('/'))
        };
        return Ok(Source::Url(url));
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
        return Ok(Source::Dir(PathBuf::from(percent_decode(path))));
    }
    if let Some(i) = raw.find("://") {
        if raw[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(SelfUpdateError::Unsupported(raw.into()));
        }
    }
    Ok(Source::Dir(PathBuf::from(raw)))
}

/// Accepts `https://` URLs, and `http://` only to a loopback host.
pub fn check_url(url: &str) -> Result<(), SelfUpdateError> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return Ok(());
    }
    let Some(rest) = lower.strip_prefix("http://") else {
        return Err(SelfUpdateError::Unsupported(url.into()));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(SelfUpdateError::Insecure { url: url.into() })
    }
}

/// A GitHub owner or repository name: letters, digits, `-`, `_` and `.`.
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
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
    fn sources_parse_and_plain_http_is_loopback_only() {
        let p = |s: &str| parse_source(s, None);
        assert_eq!(
            p("https://example.com/r").unwrap(),
            Source::Url("https://example.com/r/manifest.json".into())
        );
        assert_eq!(
            p("https://example.com/r/m.json").unwrap(),
            Source::Url("https://example.com/r/m.json".into())
        );
        assert!(matches!(
            p("http://example.com/r"),
            Err(SelfUpdateError::Insecure { .. })
        ));
        assert!(matches!(
            p("http://127.0.0.2.example.com/r"),
            Err(SelfUpdateError::Insecure { .. })
        ));
        assert!(p("http://127.0.0.1:8080/r").is_ok());
        assert!(p("http://[::1]:8080/r").is_ok());
        assert!(p("http://localhost/r").is_ok());
        assert!(matches!(
            p("ftp://example.com/r"),
            Err(SelfUpdateError::Unsupported(_))
        ));
        assert_eq!(
            p("file:///tmp/a%20b").unwrap(),
            Source::Dir(PathBuf::from("/tmp/a b"))
        );
        assert_eq!(
            p("file://localhost/tmp/r").unwrap(),
            Source::Dir(PathBuf::from("/tmp/r"))
        );
        assert_eq!(p("rel/dir").unwrap(), Source::Dir(PathBuf::from("rel/dir")));
        assert_eq!(
            p("github:o/r").unwrap(),
            Source::GitHub {
                owner: "o".into(),
                repo: "r".into(),
                api: GITHUB_API.into()
            }
        );
        assert!(p("github:o").is_err() && p("github:../x").is_err());
        assert!(matches!(
            parse_source("github:o/r", Some("http://api.example.com")),
            Err(SelfUpdateError::Insecure { .. })
        ));
    }
}
