//! A spinner on stderr while collection runs (only when the caller says stderr is a terminal).

use std::io::Write;
use std::time::Duration;

use super::fetch::Fetcher;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Runs `work`, drawing the spinner beside it when `enabled`; clears the line afterwards.
pub async fn while_running<T>(
    enabled: bool,
    fetcher: &Fetcher,
    work: impl std::future::Future<Output = T>,
) -> T {
    if !enabled {
        return work.await;
    }
    let spinner = async {
        let mut frame = 0usize;
        loop {
            let (started, finished) = fetcher.counts();
            let mut stderr = std::io::stderr().lock();
            let _ = write!(
                stderr,
                "\r{} collecting from the cluster: {finished}/{started} requests done",
                FRAMES[frame % FRAMES.len()]
            );
            let _ = stderr.flush();
            drop(stderr);
            frame += 1;
            tokio::time::sleep(Duration::from_millis(80)).await;
        }
    };
    futures::pin_mut!(work);
    futures::pin_mut!(spinner);
    let output = match futures::future::select(work, spinner).await {
        futures::future::Either::Left((output, _)) => output,
        futures::future::Either::Right(_) => unreachable!("the spinner loops forever"),
    };
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "\r\x1b[2K");
    let _ = stderr.flush();
    output
}
