//! A console of a program's own pages at `/__sandbox/`, in the simulator's console frame
//! (navigation, sign-in and sign-out, script, style sheet, Content Security Policy),
//! behind [`AdminChecks`].

use std::{collections::HashMap, fmt, sync::Arc};

use axum::{
    body::{Body, Bytes},
    http::{Response, request::Parts},
};
use maud::PreEscaped;

use super::AdminChecks;
use crate::{
    console::{self, Section, frame},
    pages::PageServer,
};

/// What a console page is given to render.
#[derive(Debug)]
pub struct ConsolePage<'a> {
    query: &'a HashMap<String, String>,
    origin: &'a str,
}

impl ConsolePage<'_> {
    /// A parameter of the page's query string, decoded.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    /// The server's base URL as the browser reached it (`http://localhost:8081`).
    pub fn origin(&self) -> &str {
        self.origin
    }
}

type Render = Arc<dyn Fn(&ConsolePage<'_>) -> String + Send + Sync>;

/// The pages of a [`Console`]; see [`Console::builder`].
#[must_use]
pub struct ConsoleBuilder {
    brand: &'static str,
    server: &'static str,
    pages: Vec<(&'static str, &'static str, Render)>,
    style: Option<&'static str>,
}

impl fmt::Debug for ConsoleBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pages: Vec<_> = self.pages.iter().map(|(p, n, _)| (p, n)).collect();
        f.debug_struct("ConsoleBuilder")
            .field("brand", &self.brand)
            .field("server", &self.server)
            .field("pages", &pages)
            .field("style", &self.style.map(str::len))
            .finish()
    }
}

impl ConsoleBuilder {
    /// A section at `/__sandbox/{path}`, named `name` in the navigation and as the page's
    /// title, whose main content `render` makes at every request: HTML, escaped by the
    /// caller (it is inserted as it is). The first section is also the console's root.
    pub fn page(
        mut self,
        path: &'static str,
        name: &'static str,
        render: impl Fn(&ConsolePage<'_>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.pages.push((path, name, Arc::new(render)));
        self
    }

    /// A style sheet for the pages' own markup, served at `/__sandbox/pages.css` and
    /// linked after the console's (the Content Security Policy allows no inline style).
    pub fn style(mut self, css: &'static str) -> Self {
        self.style = Some(css);
        self
    }

    /// The console, behind `checks`.
    ///
    /// # Panics
    /// A path the router cannot take (`{` or `*` in it), or given twice.
    pub fn build(self, checks: &AdminChecks) -> Console {
        let sections: Vec<Section> = self
            .pages
            .into_iter()
            .map(|(path, name, render)| {
                let section: Section = (
                    path,
                    name,
                    Arc::new(move |request: &console::Request| {
                        let page = ConsolePage {
                            query: &request.query,
                            origin: &request.origin,
                        };
                        PreEscaped(render(&page))
                    }),
                );
                section
            })
            .collect();
        let pages = frame::hosted_pages(self.brand, self.server, sections, self.style, &checks.0);
        Console {
            pages: PageServer::new(checks.0.clone(), pages),
        }
    }
}

/// A console at `/__sandbox/`: the pages given to its builder, `/__sandbox` leading to
/// them, the script and style sheet, signing in and out. Its handler answers what it
/// serves; the program's [`Handler`](crate::Handler) passes it those requests.
pub struct Console {
    pages: PageServer,
}

impl fmt::Debug for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Console").finish_non_exhaustive()
    }
}

impl Console {
    /// Where the console lives.
    pub const ROOT: &'static str = console::ROOT;

    /// A console named `brand` (on every page); `server` is what the sign-in page says
    /// needs the admin token ("This {server}'s admin API needs its admin token").
    ///
    /// ```no_run
    /// # async fn demo() -> std::io::Result<()> {
    /// use std::sync::Arc;
    ///
    /// use axum::{
    ///     body::{Body, Bytes},
    ///     http::{Response, request::Parts},
    /// };
    /// use licensing_host::{AdminChecks, Console, Handler, Host};
    ///
    /// /// Its console at `/__sandbox/`; echoes every other body.
    /// #[derive(Clone)]
    /// struct Echo(Arc<Console>);
    ///
    /// impl Handler for Echo {
    ///     async fn handle(&self, parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
    ///         if parts.uri.path().starts_with("/__sandbox") {
    ///             return self.0.handle(parts, body).await;
    ///         }
    ///         Response::new(Body::from(body.unwrap_or_default()))
    ///     }
    ///
    ///     fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
    ///         self.0.refuse(parts)
    ///     }
    /// }
    ///
    /// let listening = Host::builder().bind().await?;
    /// let checks = AdminChecks::new(&listening, None, Vec::new());
    /// let console = Console::builder("echo", "echo server")
    ///     .page("about", "About", |_| "<p>Echoes every body.</p>".to_string())
    ///     .build(&checks);
    /// let host = listening.serve(Echo(Arc::new(console)));
    /// println!("console at {}/__sandbox/", host.url());
    /// # Ok(()) }
    /// ```
    pub fn builder(brand: &'static str, server: &'static str) -> ConsoleBuilder {
        ConsoleBuilder {
            brand,
            server,
            pages: Vec::new(),
            style: None,
        }
    }

    /// A request the admin checks refuse from its head alone, before its body is read
    /// (a sign-in form when only the admin token is missing); `None` for any other.
    pub fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        self.pages.refuse(parts)
    }

    /// Answers one request to the console (`404` for a path it does not serve).
    pub async fn handle(&self, parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
        self.pages.handle(parts, body).await
    }
}
