//! The inertness comparison of JSX / TSX / JS / TS with oxc.
//!
//! Both versions are parsed; the JSX opening elements of each are listed in document order
//! with a fingerprint of their attributes (name and value source). Exactly one element may
//! differ, by exactly one inserted attribute. That attribute is then removed from the new AST
//! and the two programs are compared span-insensitively (`ContentEq`: every other node, JSX
//! text included), and the comments (kind and text, in order) are compared. Only then are the
//! attribute's name and value checked.

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Comment, JSXAttributeItem, JSXAttributeName, JSXAttributeValue, JSXOpeningElement, Program,
};
use oxc_ast_visit::{walk, walk_mut, Visit, VisitMut};
use oxc_parser::Parser;
use oxc_span::{ContentEq, GetSpan, SourceType};

use super::{check_attribute, lone_insert, Reason};
use crate::packs::RuleError;

/// One attribute as seen for alignment: its name and the source of its value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AttrPrint {
    name: String,
    value: Option<String>,
    /// The value of a string literal.
    literal: Option<String>,
}

/// The opening elements of a program in document order, by their attributes.
struct Openings<'s> {
    source: &'s str,
    list: Vec<Vec<AttrPrint>>,
}

fn attr_name(n: &JSXAttributeName<'_>) -> String {
    match n {
        JSXAttributeName::Identifier(id) => id.name.to_string(),
        JSXAttributeName::NamespacedName(ns) => format!("{}:{}", ns.namespace.name, ns.name.name),
    }
}

impl<'a> Visit<'a> for Openings<'_> {
    fn visit_jsx_opening_element(&mut self, it: &JSXOpeningElement<'a>) {
        let slice = |s: oxc_span::Span| {
            self.source
                .get(s.start as usize..s.end as usize)
                .unwrap_or("")
                .to_owned()
        };
        let mut attrs = Vec::with_capacity(it.attributes.len());
        for a in &it.attributes {
            attrs.push(match a {
                JSXAttributeItem::Attribute(a) => AttrPrint {
                    name: attr_name(&a.name),
                    value: a.value.as_ref().map(|v| slice(v.span())),
                    literal: match &a.value {
                        Some(JSXAttributeValue::StringLiteral(s)) => Some(s.value.to_string()),
                        _ => None,
                    },
                },
                JSXAttributeItem::SpreadAttribute(s) => AttrPrint {
                    name: format!("...{}", slice(s.span)),
                    value: None,
                    literal: None,
                },
            });
        }
        // The element's name is part of its fingerprint, as a pseudo-attribute.
        attrs.insert(
            0,
            AttrPrint {
                name: format!("<{}", slice(it.name.span())),
                value: None,
                literal: None,
            },
        );
        self.list.push(attrs);
        walk::walk_jsx_opening_element(self, it);
    }
}

/// Removes attribute `attr` of the `element`-th opening element (document order).
struct Remove {
    element: usize,
    attr: usize,
    seen: usize,
    done: bool,
}

impl<'a> VisitMut<'a> for Remove {
    fn visit_jsx_opening_element(&mut self, it: &mut JSXOpeningElement<'a>) {
        if self.seen == self.element && self.attr < it.attributes.len() {
            it.attributes.remove(self.attr);
            self.done = true;
        }
        self.seen += 1;
        walk_mut::walk_jsx_opening_element(self, it);
    }
}

fn source_type(ext: &str) -> SourceType {
    match ext {
        "tsx" => SourceType::tsx(),
        "jsx" => SourceType::jsx(),
        "ts" => SourceType::ts(),
        // React projects write JSX in `.js` files too.
        _ => SourceType::mjs().with_jsx(true),
    }
}

fn comments(source: &str, list: &[Comment]) -> Vec<(bool, String)> {
    list.iter()
        .map(|c| {
            let text = source
                .get(c.span.start as usize..c.span.end as usize)
                .unwrap_or("");
            (c.kind == oxc_ast::ast::CommentKind::Block, text.to_owned())
        })
        .collect()
}

fn openings(source: &str, program: &Program<'_>) -> Vec<Vec<AttrPrint>> {
    let mut o = Openings {
        source,
        list: Vec::new(),
    };
    o.visit_program(program);
    o.list
}

/// `Ok(None)` when `after` is `before` with one convention attribute added, else the reason;
/// `Err` when `before` does not parse.
pub fn compare(
    ext: &str,
    before: &str,
    after: &str,
    convention: &str,
) -> Result<Option<Reason>, RuleError> {
    let st = source_type(ext);
    let alloc_b = Allocator::default();
    let b = Parser::new(&alloc_b, before, st).parse();
    if b.panicked || !b.errors.is_empty() {
        return Err(RuleError::Unparsed(format!(
            "the {ext} file does not parse before the edit"
        )));
    }
    let alloc_a = Allocator::default();
    let mut a = Parser::new(&alloc_a, after, st).parse();
    if a.panicked || !a.errors.is_empty() {
        return Ok(Some(Reason::Unparsed));
    }
    let ob = openings(before, &b.program);
    let oa = openings(after, &a.program);
    let same_comments =
        comments(before, &b.program.comments) == comments(after, &a.program.comments);
    if ob.len() != oa.len() {
        return Ok(Some(Reason::Elements));
    }
    let changed: Vec<usize> = (0..ob.len()).filter(|&i| ob[i] != oa[i]).collect();
    let k = match changed.as_slice() {
        [] => {
            return Ok(Some(if !b.program.content_eq(&a.program) {
                Reason::Structure
            } else if !same_comments {
                Reason::Comments
            } else {
                Reason::NoAttribute
            }))
        }
        [k] => *k,
        _ => return Ok(Some(Reason::Elements)),
    };
    // The element's name is entry 0; a renamed element is a changed element.
    if ob[k][0] != oa[k][0] {
        return Ok(Some(Reason::Elements));
    }
    let Some(j) = lone_insert(&ob[k], &oa[k]) else {
        return Ok(Some(Reason::Attributes));
    };
    let added = oa[k][j].clone();
    let mut remove = Remove {
        element: k,
        attr: j - 1,
        seen: 0,
        done: false,
    };
    remove.visit_program(&mut a.program);
    if !remove.done || !b.program.content_eq(&a.program) {
        return Ok(Some(Reason::Structure));
    }
    if !same_comments {
        return Ok(Some(Reason::Comments));
    }
    Ok(check_attribute(
        &added.name,
        added.literal.as_deref(),
        convention,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "import React from 'react';\n\
        // Renders the button.\n\
        export function Button({ label }: { label: string }) {\n  \
          return (\n    <div className=\"wrap\">\n      \
          <button type=\"button\" onClick={() => go()}>{label}</button>\n      \
          <span>Save</span>\n    </div>\n  );\n}\n";

    fn verdict(after: &str) -> Option<Reason> {
        compare("tsx", BASE, after, "data-testid").unwrap()
    }

    #[test]
    fn one_convention_attribute_is_inert_anything_else_is_not() {
        let with = |from: &str, to: &str| BASE.replacen(from, to, 1);
        for (after, want) in [
            (
                with("<button type", "<button data-testid=\"save-button\" type"),
                None,
            ),
            (
                with(
                    "type=\"button\" onClick={() => go()}>",
                    "type=\"button\" onClick={() => go()} data-testid='save'>",
                ),
                None,
            ),
            (with("<span>", "<span data-testid=\"label-2\">"), None),
            (
                with(
                    "<button type",
                    "<button data-testid=\"save-button\" aria-label=\"x\" type",
                ),
                Some(Reason::Attributes),
            ),
            (
                with("<span>Save</span>", "<span data-testid=\"s\">Store</span>"),
                Some(Reason::Structure),
            ),
            (
                with("<span>", "<span data-testid=\"saveButton\">"),
                Some(Reason::NotKebab("saveButton".into())),
            ),
            (
                with("<span>", "<span data-cy=\"save\">"),
                Some(Reason::WrongName {
                    found: "data-cy".into(),
                    want: "data-testid".into(),
                }),
            ),
            (
                with("<span>", "<span data-testid={\"save\"}>"),
                Some(Reason::NotLiteral),
            ),
            (
                with("<span>", "<span data-testid>"),
                Some(Reason::NotLiteral),
            ),
            (
                with("// Renders the button.", "// Renders a button."),
                Some(Reason::Comments),
            ),
            (
                with("// Renders the button.", "// Renders a button.").replacen(
                    "<span>",
                    "<span data-testid=\"s\">",
                    1,
                ),
                Some(Reason::Comments),
            ),
            (
                with("type=\"button\"", "type=\"submit\""),
                Some(Reason::Attributes),
            ),
            (with("go()", "stop()"), Some(Reason::Attributes)),
            (
                with("return (", "go();\n  return ("),
                Some(Reason::Structure),
            ),
            (BASE.to_owned(), Some(Reason::NoAttribute)),
            (with("</div>", "</div"), Some(Reason::Unparsed)),
        ] {
            assert_eq!(verdict(&after), want, "{after}");
        }
    }

    #[test]
    fn moved_and_added_elements_are_not_inert() {
        // The span moved inside the button: same openings in the same order, other structure.
        let moved = BASE
            .replacen(
                "{label}</button>\n      <span>Save</span>",
                "{label}<span>Save</span></button>",
                1,
            )
            .replacen("<span>", "<span data-testid=\"s\">", 1);
        assert_eq!(verdict(&moved), Some(Reason::Structure));
        // Two siblings swapped: two elements change.
        let swapped = "const a = <div><b>x</b><i>y</i></div>;";
        let after = "const a = <div><i data-testid=\"y\">y</i><b>x</b></div>;";
        assert_eq!(
            compare("jsx", swapped, after, "data-testid").unwrap(),
            Some(Reason::Elements)
        );
        let added = "const a = <div><b>x</b><b data-testid=\"x\">x</b></div>;";
        assert_eq!(
            compare(
                "jsx",
                "const a = <div><b>x</b></div>;",
                added,
                "data-testid"
            )
            .unwrap(),
            Some(Reason::Elements)
        );
    }

    #[test]
    fn jsx_comments_and_js_files_are_compared() {
        let before = "const a = <div>{/* note */}<p>t</p></div>;";
        let after = "const a = <div>{/* other */}<p data-qa=\"t\">t</p></div>;";
        assert_eq!(
            compare("js", before, after, "data-qa").unwrap(),
            Some(Reason::Comments)
        );
        let after = "const a = <div>{/* note */}<p data-qa=\"t\">t</p></div>;";
        assert_eq!(compare("js", before, after, "data-qa").unwrap(), None);
        assert!(compare("tsx", "const = ;", after, "data-qa").is_err());
        // A TypeScript file has no elements: any change adds no attribute.
        assert_eq!(
            compare(
                "ts",
                "export const x = 1;\n",
                "export const x = 2;\n",
                "data-qa"
            )
            .unwrap(),
            Some(Reason::Structure)
        );
    }
}
