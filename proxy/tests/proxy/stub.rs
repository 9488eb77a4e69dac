//! A second upstream, written in Python (standard library only): the proxy's checks come
//! from the documents, not from the simulator's habits.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
};

use super::support::{self, read_report, temp_dir};

const STUB: &str = r#"
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

ASSET = {"assetNum": "8000000001", "assetId": "A-1", "cloudAccountGlobalId": None,
         "borrowedFlag": False, "onlineFlag": False}

class Stub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, kind="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/me/api/v1/enterprise/EG-GOOD/asset/assetNums":
            self.answer(200, {"code": 0, "message": "success", "data": [ASSET]})
        elif path == "/me/api/v1/enterprise/EG-GONE/asset/assetNums":
            self.answer(299, {"code": "60017", "message": "not bound", "cause": "none"})
        elif path == "/me/api/v1/enterprise/EG-ODD/asset/assetNums":
            self.answer(299, {"code": "12345", "message": "odd", "cause": "odd"})
        elif path == "/me/api/v1/enterprise/EG-BUSY/asset/assetNums":
            self.answer(503, "busy", "text/plain")
        elif path == "/me/api/v1/enterprise/EG-LAX/asset/assetNums":
            lax = dict(ASSET, onlineFlag=1)
            del lax["assetId"]
            self.answer(200, {"code": 0, "data": [lax]})
        else:
            self.answer(404, {"message": "no such path"})

server = HTTPServer(("127.0.0.1", 0), Stub)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

struct Stub(Child);

impl Drop for Stub {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_stub(dir: &tempfile::TempDir) -> (Stub, String) {
    let script = dir.path().join("stub.py");
    std::fs::write(&script, STUB).unwrap();
    let mut child = Command::new("python3")
        .arg(&script)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the stub upstream");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().expect("the stub prints its port");
    (Stub(child), format!("http://127.0.0.1:{port}"))
}

#[tokio::test]
async fn a_python_upstream_is_judged_by_the_documents_alone() {
    let dir = temp_dir("stub");
    let (_stub, url) = start_stub(&dir);
    let report = dir.path().join("report.jsonl");
    let proxy = licensing_proxy::Proxy::builder(&url)
        .report(&report)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let mut counts = Vec::new();
    for eg in ["EG-GOOD", "EG-GONE", "EG-ODD", "EG-BUSY", "EG-LAX"] {
        let r = support::call(&http, &proxy.url(), "listAssetNums", &[eg], &[], None).await;
        counts.push((eg, r.status, r.deviations));
    }
    assert_eq!(
        counts,
        [
            ("EG-GOOD", 200, 0),
            ("EG-GONE", 299, 0),
            ("EG-ODD", 299, 1),
            ("EG-BUSY", 503, 1),
            ("EG-LAX", 200, 3)
        ]
    );
    let found: Vec<(String, String, String)> = read_report(&report)
        .into_iter()
        .map(|d| (d.pointer, d.rule, d.actual))
        .collect();
    let want = [
        ("/code", "undocumented-code", "\"12345\""),
        ("", "http-status", "503"),
        ("/message", "required", "absent"),
        ("/data/0/assetId", "required", "absent"),
        ("/data/0/onlineFlag", "type", "1"),
    ];
    assert_eq!(
        found,
        want.map(|(p, r, a)| (p.to_string(), r.to_string(), a.to_string()))
    );
}
