//! A small HTTP/1.1 server on std threads (one per connection, keep-alive), enough for kube-rs
//! and kubectl: request line and headers in, `Content-Length` or chunked bodies out, with the
//! injected latency and faults applied per request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::api::{self, Reply};
use super::{FaultAction, RequestRecord, Shared};

pub fn serve(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || connection(stream, &shared));
    }
}

struct Incoming {
    method: String,
    target: String,
    accept: String,
    close: bool,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Incoming> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut accept = String::new();
    let mut close = false;
    let mut content_length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "accept" => accept = value.to_string(),
            "connection" => close = value.eq_ignore_ascii_case("close"),
            "content-length" => content_length = value.parse().unwrap_or(0),
            _ => {}
        }
    }
    if content_length > 0 {
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Incoming {
        method,
        target,
        accept,
        close,
    })
}

fn connection(stream: TcpStream, shared: &Shared) {
    // Answers go out at once: with Nagle's algorithm a body written after its headers waits
    // for the client's delayed ACK (40 ms), which would blur the round trips we measure.
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut writer = write_half;
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let started = shared.epoch.elapsed();
        let (path, raw_query) = match request.target.split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (request.target.clone(), String::new()),
        };
        let query = decode_query(&raw_query);
        let scenario = &shared.scenario;
        let fault = scenario
            .faults
            .iter()
            .find(|f| f.matches(&request.method, &path, &raw_query))
            .map(|f| f.action.clone());
        let mut delay = scenario.latency;
        if let Some(FaultAction::Delay(extra)) = &fault {
            delay += *extra;
        }
        let round = scenario.round_quiet.map(|quiet| shared.rounds.join(quiet));
        sleep_unless_shutdown(shared, delay);
        let reply = if request.method != "GET" {
            api::status(
                405,
                "MethodNotAllowed",
                &format!(
                    "the fake API server is read-only: {} is not allowed",
                    request.method
                ),
            )
        } else {
            match &fault {
                Some(FaultAction::Status {
                    code,
                    reason,
                    message,
                }) => api::status(*code, reason, message),
                _ => api::handle(scenario, &path, &query, &request.accept),
            }
        };
        let truncate = matches!(fault, Some(FaultAction::Truncate));
        let reset = matches!(fault, Some(FaultAction::Reset));
        // Recorded before the answer goes out, so a client that has its answer always finds
        // its request in the log.
        shared.record(RequestRecord {
            method: request.method.clone(),
            path,
            query,
            raw_query,
            accept: request.accept.clone(),
            status: if reset { 0 } else { reply.status },
            started,
            finished: shared.epoch.elapsed(),
            round,
        });
        let written = if reset {
            Ok(())
        } else {
            write_reply(&mut writer, &reply, truncate)
        };
        if written.is_err() || truncate || reset || request.close {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

fn sleep_unless_shutdown(shared: &Shared, total: Duration) {
    let step = Duration::from_millis(20);
    let mut left = total;
    while left > Duration::ZERO && !shared.shutdown.load(Ordering::SeqCst) {
        let now = left.min(step);
        std::thread::sleep(now);
        left -= now;
    }
}

fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Writes the reply; `truncate` sends the headers and half the body, then the caller closes the
/// connection (a body shorter than announced, or chunks without the final one).
fn write_reply(writer: &mut TcpStream, reply: &Reply, truncate: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nCache-Control: no-cache, private\r\n",
        reply.status,
        reason_phrase(reply.status),
        reply.content_type
    );
    let body: &[u8] = if truncate {
        &reply.body[..reply.body.len() / 2]
    } else {
        &reply.body
    };
    if reply.chunked {
        head.push_str("Transfer-Encoding: chunked\r\n\r\n");
        writer.write_all(head.as_bytes())?;
        for chunk in body.chunks(16 * 1024) {
            writer.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
            writer.write_all(chunk)?;
            writer.write_all(b"\r\n")?;
        }
        if !truncate {
            writer.write_all(b"0\r\n\r\n")?;
        }
    } else {
        head.push_str(&format!("Content-Length: {}\r\n\r\n", reply.body.len()));
        let mut whole = head.into_bytes();
        whole.extend_from_slice(body);
        writer.write_all(&whole)?;
    }
    writer.flush()
}

/// `a=b&c=d%3De` into pairs, percent-decoded (`+` is a space, as Go's url.ParseQuery reads it).
pub fn decode_query(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::decode_query;

    #[test]
    fn queries_are_percent_decoded() {
        assert_eq!(
            decode_query("fieldSelector=involvedObject.name%3Dweb-0%2Ctype%3DWarning&limit=500&x=a+b&bad=%zz"),
            vec![
                ("fieldSelector".to_string(), "involvedObject.name=web-0,type=Warning".to_string()),
                ("limit".to_string(), "500".to_string()),
                ("x".to_string(), "a b".to_string()),
                ("bad".to_string(), "%zz".to_string()),
            ]
        );
    }
}
