//! Edit: a builder's value not set yet is marked by an empty message, not a message
//! allocated up front. typify's body builders and progenitor's operation builders start
//! every required field as `Err("no value supplied for x".to_string())` or
//! `Err("x was not initialized".to_string())`, so each call allocated, then freed, one
//! string per required field (twelve on `bindEnterprise`) that only a forgotten field
//! ever shows. The field starts as `Err(String::new())`, and the place that reads it
//! (the body builder's conversion, the operation builder's `send`) goes through
//! `crate::__generated::supplied` or `crate::__generated::initialized`, which write the
//! same message then if the field was never set; a setter's own error is never empty and
//! passes through unchanged.

use std::collections::BTreeSet;

use syn::visit_mut::VisitMut;

/// How many fields [`apply`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unset {
    /// Fields of body builders marked without a message.
    pub body_fields: usize,
    /// Places their conversion reads them, given the message back.
    pub body_reads: usize,
    /// Parameters of operation builders marked without a message.
    pub params: usize,
    /// Places `send` reads them, given the message back.
    pub param_reads: usize,
}

const SUPPLIED: &str = "no value supplied for ";
const INITIALIZED: &str = " was not initialized";

/// Applies the edit to a client module; fails when it finds markers but not where they
/// are read (every marked field must be read somewhere, or its message would be lost).
pub fn apply(file: &mut syn::File) -> Result<Unset, String> {
    let mut marks = Marks::default();
    marks.visit_file_mut(file);
    let mut reads = Reads {
        body: &marks.body,
        params: &marks.params,
        body_reads: 0,
        param_reads: 0,
    };
    reads.visit_file_mut(file);
    let unset = Unset {
        body_fields: marks.body_count,
        body_reads: reads.body_reads,
        params: marks.param_count,
        param_reads: reads.param_reads,
    };
    if unset.body_fields == 0 {
        return Err(format!(
            "no `Err(\"{SUPPLIED}…\".to_string())` in typify's builders: its output changed shape"
        ));
    }
    if unset.body_reads < unset.body_fields || unset.param_reads < unset.params {
        return Err(format!(
            "unset builder fields: {unset:?}; a marked field is not read where its message \
             would be given back"
        ));
    }
    Ok(unset)
}

/// Finds `Err("…".to_string())` markers, empties them, and records the field names.
#[derive(Default)]
struct Marks {
    body: BTreeSet<String>,
    params: BTreeSet<String>,
    body_count: usize,
    param_count: usize,
}

impl VisitMut for Marks {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        let Some(message) = marker(expr) else { return };
        if let Some(field) = message.strip_prefix(SUPPLIED) {
            self.body.insert(field.to_string());
            self.body_count += 1;
        } else if let Some(field) = message.strip_suffix(INITIALIZED) {
            self.params.insert(field.to_string());
            self.param_count += 1;
        } else {
            return;
        }
        *expr = syn::parse_quote!(Err(::std::string::String::new()));
    }
}

/// The message of `Err("message".to_string())`.
fn marker(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Call(call) = expr else {
        return None;
    };
    let syn::Expr::Path(f) = &*call.func else {
        return None;
    };
    if !f.path.is_ident("Err") || call.args.len() != 1 {
        return None;
    }
    let syn::Expr::MethodCall(m) = &call.args[0] else {
        return None;
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(text),
        ..
    }) = &*m.receiver
    else {
        return None;
    };
    (m.method == "to_string" && m.args.is_empty()).then(|| text.value())
}

/// Gives the message back where a marked field is read: `value.x?` in a body builder's
/// conversion, `x.map_err(Error::InvalidRequest)` in an operation builder's `send`.
struct Reads<'a> {
    body: &'a BTreeSet<String>,
    params: &'a BTreeSet<String>,
    body_reads: usize,
    param_reads: usize,
}

impl VisitMut for Reads<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        match expr {
            // `value.x?`
            syn::Expr::Try(t) => {
                let syn::Expr::Field(field) = &*t.expr else {
                    return;
                };
                let (syn::Expr::Path(base), syn::Member::Named(name)) =
                    (&*field.base, &field.member)
                else {
                    return;
                };
                if !base.path.is_ident("value") || !self.body.contains(&name.to_string()) {
                    return;
                }
                let text = name.to_string();
                let read = &field;
                *t.expr = syn::parse_quote!(crate::__generated::supplied(#read, #text));
                self.body_reads += 1;
            }
            // `x.map_err(Error::InvalidRequest)`
            syn::Expr::MethodCall(m) if m.method == "map_err" && m.args.len() == 1 => {
                let syn::Expr::Path(receiver) = &*m.receiver else {
                    return;
                };
                let Some(name) = receiver.path.get_ident().map(ToString::to_string) else {
                    return;
                };
                let is_invalid_request = matches!(&m.args[0], syn::Expr::Path(p)
                    if p.path.segments.len() == 2
                        && p.path.segments[0].ident == "Error"
                        && p.path.segments[1].ident == "InvalidRequest");
                if !is_invalid_request || !self.params.contains(&name) {
                    return;
                }
                let param = receiver.clone();
                *m.receiver = syn::parse_quote!(crate::__generated::initialized(#param, #name));
                self.param_reads += 1;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens as _;

    use super::*;

    #[test]
    fn markers_are_emptied_and_their_messages_given_back_where_read() {
        let mut file: syn::File = syn::parse_quote! {
            impl Default for Body {
                fn default() -> Self {
                    Self {
                        name: Err("no value supplied for name".to_string()),
                        note: Ok(Default::default()),
                    }
                }
            }
            impl TryFrom<Body> for super::Body {
                fn try_from(value: Body) -> Result<Self, ConversionError> {
                    Ok(Self { name: value.name?, note: value.note? })
                }
            }
            impl<'a> Op<'a> {
                fn new() -> Self {
                    Self { code: Err("code was not initialized".to_string()) }
                }
                async fn send(self) -> Result<(), Error> {
                    let Self { code, body } = self;
                    let code = code.map_err(Error::InvalidRequest)?;
                    let body = body.and_then(|v| Ok(v)).map_err(Error::InvalidRequest)?;
                    Ok(())
                }
            }
        };
        let unset = apply(&mut file).unwrap();
        assert_eq!(
            unset,
            Unset {
                body_fields: 1,
                body_reads: 1,
                params: 1,
                param_reads: 1
            }
        );
        let code = file.to_token_stream().to_string();
        assert!(
            !code.contains("\"no value supplied for name\" . to_string ())"),
            "{code}"
        );
        assert!(
            code.contains("name : Err (:: std :: string :: String :: new ())"),
            "{code}"
        );
        assert!(
            code.contains("name : crate :: __generated :: supplied (value . name , \"name\") ?"),
            "{code}"
        );
        // An optional field is read as it was.
        assert!(code.contains("note : value . note ?"), "{code}");
        assert!(
            code.contains("crate :: __generated :: initialized (code , \"code\") . map_err (Error :: InvalidRequest) ?"),
            "{code}"
        );
        assert!(
            code.contains(". map_err (Error :: InvalidRequest) ?"),
            "the body's read is its own: {code}"
        );
    }

    #[test]
    fn a_marker_whose_field_is_never_read_fails_the_build() {
        let mut file: syn::File = syn::parse_quote! {
            impl Default for Body {
                fn default() -> Self {
                    Self { name: Err("no value supplied for name".to_string()) }
                }
            }
        };
        let error = apply(&mut file).unwrap_err();
        assert!(error.contains("not read"), "{error}");
    }

    #[test]
    fn output_without_markers_fails_the_build() {
        let mut file: syn::File = syn::parse_quote! {
            impl Default for Body {
                fn default() -> Self { Self { name: Ok(String::new()) } }
            }
        };
        assert!(apply(&mut file).unwrap_err().contains("changed shape"));
    }
}
