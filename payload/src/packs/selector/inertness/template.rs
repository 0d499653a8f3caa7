//! The inertness comparison of `.vue` / `.svelte` / `.html` / `.htm` templates with the
//! html5gum tokenizer.
//!
//! Both versions become token streams (start tag, each attribute in source order with its
//! value, end of start tag, end tag, text, comment, doctype; adjacent text merged; `<script>`,
//! `<style>` and the other raw-text elements as one text each). The new stream must be the old
//! one with exactly one attribute token inserted. A value in braces (Svelte `{expr}`) or with a
//! `{{` interpolation, and an attribute without a value, are not string literals; a Vue binding
//! (`:data-testid`, `v-bind:`) has another name than the convention.

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Span, Tokenizer};

use super::{check_attribute, lone_insert, Reason};
use crate::packs::RuleError;

/// One token of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Open(Vec<u8>),
    Attr {
        name: Vec<u8>,
        value: Option<Vec<u8>>,
    },
    Close(bool),
    End(Vec<u8>),
    Text(Vec<u8>),
    Comment(Vec<u8>),
    Doctype(Vec<u8>),
}

fn tokens(source: &str) -> Vec<Tok> {
    let mut emitter =
        CallbackEmitter::new(|event: CallbackEvent<'_>, _span: Span<()>| -> Option<Tok> {
            Some(match event {
                CallbackEvent::OpenStartTag { name } => Tok::Open(name.to_vec()),
                CallbackEvent::AttributeName { name } => Tok::Attr {
                    name: name.to_vec(),
                    value: None,
                },
                // Marked as a value: joined to its name below.
                CallbackEvent::AttributeValue { value } => Tok::Attr {
                    name: Vec::new(),
                    value: Some(value.to_vec()),
                },
                CallbackEvent::CloseStartTag { self_closing } => Tok::Close(self_closing),
                CallbackEvent::EndTag { name } => Tok::End(name.to_vec()),
                CallbackEvent::String { value } => Tok::Text(value.to_vec()),
                CallbackEvent::Comment { value } => Tok::Comment(value.to_vec()),
                CallbackEvent::Doctype { name, .. } => Tok::Doctype(name.to_vec()),
                CallbackEvent::Error(_) => return None,
            })
        });
    emitter.naively_switch_states(true);
    let mut out: Vec<Tok> = Vec::new();
    for tok in Tokenizer::new_with_emitter(source, emitter).flatten() {
        match (out.last_mut(), tok) {
            (Some(Tok::Text(t)), Tok::Text(more)) => t.extend(more),
            (
                Some(Tok::Attr { value, .. }),
                Tok::Attr {
                    name,
                    value: Some(v),
                },
            ) if name.is_empty() => *value = Some(v),
            (_, tok) => out.push(tok),
        }
    }
    out
}

/// The tokens without those `drop` selects.
fn without(toks: &[Tok], drop: impl Fn(&Tok) -> bool) -> Vec<&Tok> {
    toks.iter().filter(|t| !drop(t)).collect()
}

/// For each start tag, its attributes (in order).
fn tag_attrs(toks: &[Tok]) -> Vec<Vec<&Tok>> {
    let mut out: Vec<Vec<&Tok>> = Vec::new();
    for t in toks {
        match t {
            Tok::Open(_) => out.push(Vec::new()),
            Tok::Attr { .. } => {
                if let Some(last) = out.last_mut() {
                    last.push(t);
                }
            }
            _ => {}
        }
    }
    out
}

/// Why `after` is not `before` with one attribute inserted (the first difference sits at a
/// token that is not a lone inserted attribute).
fn classify(before: &[Tok], after: &[Tok]) -> Reason {
    let is_attr = |t: &Tok| matches!(t, Tok::Attr { .. });
    if without(before, is_attr) == without(after, is_attr) {
        let (b, a) = (tag_attrs(before), tag_attrs(after));
        let changed = b.iter().zip(&a).filter(|(x, y)| x != y).count();
        return if changed > 1 {
            Reason::Elements
        } else {
            Reason::Attributes
        };
    }
    let is_comment = |t: &Tok| matches!(t, Tok::Comment(_));
    let (b, a) = (without(before, is_comment), without(after, is_comment));
    if b == a || lone_insert(&b, &a).is_some() {
        return Reason::Comments;
    }
    let tags = |toks: &[Tok]| -> Vec<Tok> {
        toks.iter()
            .filter(|t| matches!(t, Tok::Open(_) | Tok::End(_)))
            .cloned()
            .collect()
    };
    if tags(before) != tags(after) {
        Reason::Elements
    } else {
        Reason::Structure
    }
}

/// `Ok(None)` when `after` is `before` with one convention attribute added, else the reason.
/// The tokenizer recovers from any input, so this never fails.
pub fn compare(before: &str, after: &str, convention: &str) -> Result<Option<Reason>, RuleError> {
    let (b, a) = (tokens(before), tokens(after));
    if a == b {
        return Ok(Some(Reason::NoAttribute));
    }
    let Some(Tok::Attr { name, value }) = lone_insert(&b, &a).map(|i| &a[i]) else {
        return Ok(Some(classify(&b, &a)));
    };
    let name = String::from_utf8_lossy(name);
    let value = value
        .as_deref()
        .map(String::from_utf8_lossy)
        .filter(|v| !v.trim_start().starts_with('{') && !v.contains("{{"));
    Ok(check_attribute(&name, value.as_deref(), convention))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VUE: &str = "<template>\n  <div class=\"card\">\n    <!-- the title -->\n    \
        <h1 :title=\"t\">{{ title }}</h1>\n    <button @click=\"save\">Save</button>\n  \
        </div>\n</template>\n\n<script setup lang=\"ts\">\nconst a = 1 < 2 && x > 3;\n</script>\n";

    #[test]
    fn templates_accept_one_convention_attribute_only() {
        let with = |from: &str, to: &str| VUE.replacen(from, to, 1);
        for (after, want) in [
            (
                with("<button @click", "<button data-testid=\"save\" @click"),
                None,
            ),
            (
                with("<h1 :title=\"t\">", "<h1 :title=\"t\" data-testid=title-1>"),
                None,
            ),
            (
                with(
                    "<button @click",
                    "<button data-testid=\"save\" id=\"x\" @click",
                ),
                Some(Reason::Attributes),
            ),
            (
                with(
                    "<button @click=\"save\">Save",
                    "<button data-testid=\"save\" @click=\"save\">Store",
                ),
                Some(Reason::Structure),
            ),
            (
                with("<button @click", "<button data-testid=\"Save_Btn\" @click"),
                Some(Reason::NotKebab("Save_Btn".into())),
            ),
            (
                with("<button @click", "<button :data-testid=\"save\" @click"),
                Some(Reason::WrongName {
                    found: ":data-testid".into(),
                    want: "data-testid".into(),
                }),
            ),
            (
                with("<button @click", "<button data-testid=\"{{ id }}\" @click"),
                Some(Reason::NotLiteral),
            ),
            (
                with("<!-- the title -->", "<!-- a title -->").replacen(
                    "<button @click",
                    "<button data-testid=\"save\" @click",
                    1,
                ),
                Some(Reason::Comments),
            ),
            (
                with("const a = 1", "const a = 2").replacen(
                    "<button @click",
                    "<button data-testid=\"save\" @click",
                    1,
                ),
                Some(Reason::Structure),
            ),
            (VUE.to_owned(), Some(Reason::NoAttribute)),
        ] {
            assert_eq!(
                compare(VUE, &after, "data-testid").unwrap(),
                want,
                "{after}"
            );
        }
    }

    #[test]
    fn moved_elements_and_svelte_expressions() {
        let before = "<ul><li>a</li><li>b</li></ul>";
        let moved = "<ul><li data-cy=\"b\">b</li><li>a</li></ul>";
        assert_eq!(
            compare(before, moved, "data-cy").unwrap(),
            Some(Reason::Structure)
        );
        let nested = "<ul><li data-cy=\"a\">a<li>b</li></li></ul>";
        assert_eq!(
            compare(before, nested, "data-cy").unwrap(),
            Some(Reason::Elements)
        );
        let svelte = "<button on:click={go}>Go</button>";
        assert_eq!(
            compare(
                svelte,
                "<button data-cy={id} on:click={go}>Go</button>",
                "data-cy"
            )
            .unwrap(),
            Some(Reason::NotLiteral)
        );
        assert_eq!(
            compare(
                svelte,
                "<button data-cy=\"go\" on:click={go}>Go</button>",
                "data-cy"
            )
            .unwrap(),
            None
        );
    }
}
