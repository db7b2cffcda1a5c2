//! The kube-rs client from the kubeconfig (`--kubeconfig`, `--context`), with whatever auth it
//! names, the `aws eks get-token` exec plugin included. Anything that stops us from talking to
//! the cluster at all is one line and exit 3.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Config;

use super::fetch::{describe_auth_error, error_chain};
use super::{CollectError, Settings};

pub struct Connection {
    pub client: kube::Client,
    pub default_namespace: String,
    pub server: String,
}

pub async fn connect(settings: &Settings) -> Result<Connection, CollectError> {
    let options = KubeConfigOptions {
        context: settings.context.clone(),
        cluster: None,
        user: None,
    };
    let loaded = match &settings.kubeconfig {
        Some(path) => match Kubeconfig::read_from(path) {
            Ok(kubeconfig) => Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| {
                    one_line(&format!(
                        "cannot use kubeconfig {}: {}",
                        path.display(),
                        error_chain(&e)
                    ))
                }),
            Err(e) => Err(one_line(&format!(
                "cannot read kubeconfig {}: {}",
                path.display(),
                error_chain(&e)
            ))),
        },
        None if settings.context.is_some() => Config::from_kubeconfig(&options)
            .await
            .map_err(|e| one_line(&format!("cannot use the kubeconfig: {}", error_chain(&e)))),
        // Without flags: the kubeconfig ($KUBECONFIG or ~/.kube/config), else in-cluster.
        None => Config::infer().await.map_err(|e| {
            one_line(&format!(
                "no usable kubeconfig and not in a cluster: {}",
                error_chain(&e)
            ))
        }),
    };
    let mut config = loaded.map_err(CollectError::Unreachable)?;
    // One pass, no hidden retries: a failing read becomes a missing fact at once, and request
    // counts stay what the plan says.
    config.default_retry = false;
    if let Some(limit) = settings.request_timeout {
        config.connect_timeout = Some(limit);
    }
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    let default_namespace = config.default_namespace.clone();
    let client = kube::Client::try_from(config).map_err(|e| {
        let detail = match &e {
            kube::Error::Auth(auth) => describe_auth_error(auth),
            other => error_chain(other),
        };
        CollectError::Unreachable(one_line(&format!(
            "cannot authenticate to {server}: {detail}"
        )))
    })?;
    Ok(Connection {
        client,
        default_namespace,
        server,
    })
}

/// Error lines stay on one line whatever the nested errors printed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
