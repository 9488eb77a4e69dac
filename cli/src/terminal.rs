//! Text for a person's terminal. What the services, the simulator or a file hand back may
//! hold control characters: an escape sequence can retitle the window, clear the screen
//! or hide what follows, and a bidirectional override can make a line read differently
//! from what it holds. Everything printed for a person goes through [`escape`]; JSON
//! output does not (serde_json escapes the control characters, and a bidi character in
//! a JSON string is data a program reads as it is). The escaping itself is the
//! workspace's one for terminals, shared with the proxy and the coverage report.

pub use licensing_escape::terminal::escape;
