//! Serves one fake-cluster scenario until killed, for trying the plugin by hand and for the
//! README example: `cargo run -p karpenter-why-tests --bin fake-api -- pending-ice [LATENCY_MS]`
//! prints the path of a kubeconfig pointing at it.

use std::time::Duration;

use karpenter_why_tests::fake_api::{scenarios, FakeApi};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "pending-ice".into());
    let latency_ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let Some(scenario) = scenarios::by_name(&name) else {
        eprintln!(
            "unknown scenario {name:?}; one of: {}",
            scenarios::NAMES.join(", ")
        );
        std::process::exit(2);
    };
    let server = FakeApi::start(scenario.with_latency(Duration::from_millis(latency_ms)));
    let dir = std::env::temp_dir().join(format!("karpenter-why-fake-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = server.write_kubeconfig(&dir, "default");
    println!("{}", kubeconfig.display());
    eprintln!(
        "serving scenario {name} at {} ({latency_ms} ms per request); Ctrl-C stops",
        server.url()
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
