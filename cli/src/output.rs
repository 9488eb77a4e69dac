//! What a command prints: JSON (the default when stdout is not a terminal), a table
//! (when it is), or JSON lines for `--paginate`.

use std::io::Write;

use futures_util::{Stream, StreamExt as _};
use serde::Serialize;

use crate::{error::CliError, terminal::escape};

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Pretty JSON; one compact JSON value per line for streams.
    Json,
    /// Aligned columns for lists, `key  value` lines for objects.
    Table,
}

/// Where a command's results go.
pub struct Sink {
    /// The format.
    pub format: Format,
    out: Box<dyn Write + Send>,
}

impl Sink {
    /// A sink on stdout.
    pub fn stdout(format: Format) -> Self {
        Self {
            format,
            out: Box::new(std::io::stdout()),
        }
    }

    /// A sink on `out` (a tool call keeps what the command writes).
    pub fn to(format: Format, out: Box<dyn Write + Send>) -> Self {
        Self { format, out }
    }

    /// Writes one value in the sink's format.
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CliError> {
        let text = match self.format {
            Format::Json => {
                let mut text = serde_json::to_string_pretty(value).expect("serializable");
                text.push('\n');
                text
            }
            Format::Table => table(&Json::of(value)),
        };
        self.write(text.as_bytes())
    }

    /// Writes raw bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        self.out
            .write_all(bytes)
            .and_then(|()| self.out.flush())
            .or_else(|e| {
                // A closed pipe (`| head`) is the reader's choice, not a failure.
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    Ok(())
                } else {
                    Err(CliError::usage(format!("cannot write output: {e}")))
                }
            })
    }
}

/// Prints an operation's result: its data, or for a partial failure the data and then
/// the error.
pub fn data<T: Serialize>(
    sink: &mut Sink,
    result: Result<T, licensing_sdk::Error>,
) -> Result<(), CliError> {
    match result {
        Ok(data) => sink.value(&data),
        Err(licensing_sdk::Error::PartialFailure { error, result }) => {
            sink.value(&*result)?;
            let error = licensing_sdk::Error::Api(error);
            Err(CliError::from(error))
        }
        Err(e) => Err(e.into()),
    }
}

/// Prints every item of a paged operation as it arrives: one JSON line each, or (with
/// `--output table`) one table of them all.
pub async fn items<T, S>(sink: &mut Sink, stream: S) -> Result<(), CliError>
where
    T: Serialize,
    S: Stream<Item = Result<T, licensing_sdk::Error>> + Unpin,
{
    let mut stream = stream;
    let mut rows = Vec::new();
    while let Some(item) = stream.next().await {
        let item = item?;
        match sink.format {
            Format::Json => {
                let mut line = serde_json::to_vec(&item).expect("serializable");
                line.push(b'\n');
                sink.write(&line)?;
            }
            Format::Table => rows.push(Json::of(&item)),
        }
    }
    if sink.format == Format::Table {
        sink.write(table(&Json::Array(rows)).as_bytes())?;
    }
    Ok(())
}

/// A JSON value whose objects keep their fields in the order they were written (the
/// spec's order), for tables.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// A boolean, number or string, as printed.
    Scalar(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, fields in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value as serialized.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Json {
        let text = serde_json::to_string(value).expect("serializable");
        serde_json::from_str(&text).expect("valid JSON")
    }

    /// Compact JSON text (for nested values in a cell).
    fn compact(&self) -> String {
        match self {
            Json::Null => "null".into(),
            Json::Scalar(s) => serde_json::to_string(s).unwrap_or_default(),
            Json::Array(items) => format!(
                "[{}]",
                items.iter().map(Json::cell).collect::<Vec<_>>().join(",")
            ),
            Json::Object(fields) => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(k, v)| format!("{k}:{}", v.cell()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    /// The value in a table cell: scalars as they are, nested values compact.
    fn cell(&self) -> String {
        match self {
            Json::Null => String::new(),
            Json::Scalar(s) => s.clone(),
            other => other.compact(),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Scalar(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Scalar(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Scalar(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Scalar(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Scalar(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = a.next_entry()? {
                    fields.push(entry);
                }
                Ok(Json::Object(fields))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// Cells wider than this are cut (with `…`), so that one long value cannot push the
/// other columns off the screen.
const MAX_CELL: usize = 48;

fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// A cell's text: escaped (see [`escape`]), then cut to [`MAX_CELL`].
fn clip(s: &str) -> String {
    let s = escape(s);
    if width(&s) <= MAX_CELL {
        return s.into_owned();
    }
    let mut out = String::new();
    for c in s.chars() {
        if width(&out) + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) >= MAX_CELL {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// Rows of cells under a header, aligned by display width.
fn columns(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell));
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < cells.len() {
                out.push_str(&" ".repeat(widths[i] - width(cell) + 2));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// Whether `value` is printed as a table of its own under its key: a list with objects.
fn nested_list(value: &Json) -> bool {
    matches!(value, Json::Array(items) if items.iter().any(|i| matches!(i, Json::Object(_))))
}

/// A readable table of a value: a list of objects as columns (the fields in order of
/// first appearance), an object as `field  value` lines with each of its lists of objects
/// (a page's items, a partial failure's results) as a table of its own under its key,
/// anything else as text. Every key and value is escaped (see [`escape`]).
pub fn table(value: &Json) -> String {
    match value {
        Json::Array(items) if items.is_empty() => "(none)\n".to_string(),
        Json::Array(items) if items.iter().all(|i| matches!(i, Json::Object(_))) => {
            let mut header: Vec<&str> = Vec::new();
            for item in items {
                if let Json::Object(fields) = item {
                    for (k, _) in fields {
                        if !header.contains(&k.as_str()) {
                            header.push(k);
                        }
                    }
                }
            }
            let rows: Vec<Vec<String>> = items
                .iter()
                .map(|item| {
                    let Json::Object(fields) = item else {
                        unreachable!()
                    };
                    header
                        .iter()
                        .map(|h| {
                            fields
                                .iter()
                                .find(|(k, _)| k == h)
                                .map_or(String::new(), |(_, v)| clip(&v.cell()))
                        })
                        .collect()
                })
                .collect();
            let header: Vec<String> = header.into_iter().map(|h| escape(h).into_owned()).collect();
            columns(&header, &rows)
        }
        Json::Array(items) => items
            .iter()
            .map(|i| format!("{}\n", escape(&i.cell())))
            .collect(),
        Json::Object(fields) => {
            let rows: Vec<Vec<String>> = fields
                .iter()
                .filter(|(_, v)| !nested_list(v))
                .map(|(k, v)| vec![escape(k).into_owned(), clip(&v.cell())])
                .collect();
            let mut out = if rows.is_empty() {
                String::new()
            } else {
                columns(&["FIELD".to_string(), "VALUE".to_string()], &rows)
            };
            for (name, items) in fields.iter().filter(|(_, v)| nested_list(v)) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{}:\n", escape(name)));
                out.push_str(&table(items));
            }
            out
        }
        Json::Null => "ok\n".to_string(),
        Json::Scalar(s) => format!("{}\n", escape(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn each_list_of_objects_in_an_object_is_a_table_under_its_key() {
        // `addMembers`' partial failure (60027): what was added and what was not.
        let result = json(
            r#"{"succeeded":[{"userName":"ada","globalId":"MG-1"}],
                "failed":[{"userName":"bob","message":"taken"},{"userName":"eve","message":"bad: x"}]}"#,
        );
        assert_eq!(
            table(&result),
            "succeeded:\n\
             userName  globalId\n\
             ada       MG-1\n\
             \n\
             failed:\n\
             userName  message\n\
             bob       taken\n\
             eve       bad: x\n"
        );
        // Scalars first, as `field  value` lines; an empty list stays a cell.
        let page = json(r#"{"total":1,"none":[],"list":[{"id":"1"}],"tags":["a"]}"#);
        assert_eq!(
            table(&page),
            "FIELD  VALUE\n\
             total  1\n\
             none   []\n\
             tags   [a]\n\
             \n\
             list:\n\
             id\n\
             1\n"
        );
    }

    #[test]
    fn keys_and_cells_are_escaped_and_json_is_not() {
        let name = "E\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}gpj.exe\nx";
        let value = serde_json::json!([{ "enterpriseName": name, "k\tey": "v" }]);
        let text = table(&Json::of(&value));
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{202e}', '\t']),
            "{text:?}"
        );
        assert_eq!(text.lines().count(), 2, "{text:?}");
        assert!(
            text.contains("E\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}gpj.exe\\nx"),
            "{text:?}"
        );
        assert!(text.starts_with("enterpriseName"), "{text:?}");
        assert!(text.contains("k\\tey"), "{text:?}");
        let object = table(&json(r#"{"a\u001b":"\u0007"}"#));
        assert_eq!(object, "FIELD    VALUE\na\\u{1b}  \\u{7}\n");
        assert_eq!(table(&json(r#""\u009b31m""#)), "\\u{9b}31m\n");
        assert_eq!(table(&json(r#"["\u001b"]"#)), "\\u{1b}\n");
    }

    #[test]
    fn a_cut_cell_is_escaped_first() {
        let long = format!("{}\u{1b}", "x".repeat(60));
        let cell = clip(&long);
        assert!(cell.ends_with('…') && !cell.contains('\u{1b}'), "{cell:?}");
        assert_eq!(width(&cell), MAX_CELL);
    }
}
