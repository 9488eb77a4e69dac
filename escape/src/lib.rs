//! Text from outside made inert for where it is written. A value that came from a
//! recording, a journal or a service's reply may hold anything; written raw it can clear
//! a terminal, forge a heading or a row in a pull-request comment, or make a JUnit file
//! unparseable. Each destination has one function here, and every package that writes a
//! value there calls it:
//!
//! - [`terminal::escape`]: text for a person's terminal;
//! - [`markdown::text`] and [`markdown::code`]: a value inside a CommonMark/GFM document;
//! - [`xml::text`]: a value in XML element text or an attribute value;
//! - [`json::for_terminal`]: JSON text printed where a person may read it.
//!
//! The terminal, markdown and XML functions show a character they cannot write as it is
//! in one notation, Rust's `\u{1b}` (and `\n`, `\r`, `\t`), so a value reads the same
//! wherever it lands; JSON keeps its own (`\u001b`), which a program reads back.

#![forbid(unsafe_code)]

pub mod json;
pub mod markdown;
pub mod terminal;
pub mod xml;
