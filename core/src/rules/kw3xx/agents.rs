//! Which node agent removes a startup taint, and which device plugin registers an extended
//! resource: KW306 names the DaemonSet the user has to look at.
//!
//! Sources: the taint keys are the constants in each agent's own code (Cilium
//! `node.cilium.io/agent-not-ready`; aws-ebs-csi-driver, aws-efs-csi-driver,
//! aws-fsx-csi-driver and mountpoint-s3-csi-driver `AgentNotReadyNodeTaintKey`; Istio's node
//! untaint controller `TaintName = "cni.istio.io/not-ready"`), and the DaemonSet names are the
//! ones in each project's published manifests / Helm charts. Calico has no startup taint of its
//! own, so none is listed for it.

/// An agent that removes a startup taint once it runs on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaintOwner {
    pub key: &'static str,
    pub agent: &'static str,
    /// Substrings of the DaemonSet (or pod) names the agent runs as.
    pub daemonsets: &'static [&'static str],
    pub namespace: &'static str,
    /// A label selector for the agent's pods.
    pub pod_selector: &'static str,
    /// What else must be true for the agent to remove the taint.
    pub note: &'static str,
}

pub const TAINT_OWNERS: &[TaintOwner] = &[
    TaintOwner {
        key: "node.cilium.io/agent-not-ready",
        agent: "Cilium",
        daemonsets: &["cilium"],
        namespace: "kube-system",
        pod_selector: "k8s-app=cilium",
        note: "the Cilium agent on the node must become Ready; the cilium-operator (or the agent, by version) then removes the taint, and needs RBAC to patch nodes",
    },
    TaintOwner {
        key: "ebs.csi.aws.com/agent-not-ready",
        agent: "the EBS CSI driver node plugin",
        daemonsets: &["ebs-csi-node"],
        namespace: "kube-system",
        pod_selector: "app=ebs-csi-node",
        note: "the ebs-csi-node pod must start on the node (it removes the taint itself); it needs a toleration for the taint, which the add-on and chart have by default",
    },
    TaintOwner {
        key: "efs.csi.aws.com/agent-not-ready",
        agent: "the EFS CSI driver node plugin",
        daemonsets: &["efs-csi-node"],
        namespace: "kube-system",
        pod_selector: "app=efs-csi-node",
        note: "the efs-csi-node pod must start on the node and removes the taint itself",
    },
    TaintOwner {
        key: "fsx.csi.aws.com/agent-not-ready",
        agent: "the FSx for Lustre CSI driver node plugin",
        daemonsets: &["fsx-csi-node"],
        namespace: "kube-system",
        pod_selector: "app=fsx-csi-node",
        note: "the fsx-csi-node pod must start on the node and removes the taint itself",
    },
    TaintOwner {
        key: "s3.csi.aws.com/agent-not-ready",
        agent: "the Mountpoint for Amazon S3 CSI driver node plugin",
        daemonsets: &["s3-csi-node"],
        namespace: "kube-system",
        pod_selector: "app=s3-csi-node",
        note: "the s3-csi-node pod must start on the node and removes the taint itself",
    },
    TaintOwner {
        key: "cni.istio.io/not-ready",
        agent: "the Istio CNI node agent",
        daemonsets: &["istio-cni-node"],
        namespace: "istio-system",
        pod_selector: "k8s-app=istio-cni-node",
        note: "istiod's node untaint controller removes it once the istio-cni-node pod on the node is Ready (istiod must run with PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS=true)",
    },
];

/// The agent that removes a startup taint, by the taint's key (with or without `=value:Effect`).
pub fn taint_owner(taint: &str) -> Option<&'static TaintOwner> {
    let key = taint_key(taint);
    TAINT_OWNERS.iter().find(|o| o.key == key)
}

/// `key` of `key=value:Effect` / `key:Effect` / `key`.
pub fn taint_key(taint: &str) -> &str {
    let t = taint.trim().trim_matches('"');
    let end = t.find(['=', ':']).unwrap_or(t.len());
    &t[..end]
}

/// A device plugin (or agent) that advertises an extended resource on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceOwner {
    /// The resource name, or its prefix when it ends with `/`.
    pub resource: &'static str,
    pub plugin: &'static str,
    pub daemonsets: &'static [&'static str],
    pub namespace: &'static str,
    /// A command that installs or enables it.
    pub install: &'static str,
    pub note: &'static str,
}

pub const RESOURCE_OWNERS: &[ResourceOwner] = &[
    ResourceOwner {
        resource: "nvidia.com/gpu",
        plugin: "the NVIDIA device plugin",
        daemonsets: &["nvidia-device-plugin", "nvidia-device-plugin-daemonset"],
        namespace: "kube-system",
        install: "helm upgrade --install nvdp nvidia-device-plugin --repo https://nvidia.github.io/k8s-device-plugin --namespace kube-system",
        note: "the plugin's pods must tolerate the NodePool's taints (e.g. nvidia.com/gpu:NoSchedule) and the AMI must carry the NVIDIA driver (the EKS-optimized accelerated AMI or the Bottlerocket NVIDIA variant); with the GPU Operator, its nvidia-device-plugin-daemonset plays this role",
    },
    ResourceOwner {
        resource: "vpc.amazonaws.com/pod-eni",
        plugin: "the VPC CNI with Security Groups for Pods (ENABLE_POD_ENI=true on aws-node) and the VPC resource controller",
        daemonsets: &["aws-node"],
        namespace: "kube-system",
        install: "kubectl set env daemonset aws-node -n kube-system ENABLE_POD_ENI=true",
        note: "the cluster role needs AmazonEKSVPCResourceController, and the instance type must support trunk ENIs (Nitro, not t-family)",
    },
    ResourceOwner {
        resource: "aws.amazon.com/neuron",
        plugin: "the AWS Neuron device plugin",
        daemonsets: &["neuron-device-plugin"],
        namespace: "kube-system",
        install: "helm upgrade --install neuron-helm-chart oci://public.ecr.aws/neuron/neuron-helm-chart --namespace kube-system",
        note: "the Neuron driver must be on the AMI (the EKS-optimized accelerated AMI or the Bottlerocket Neuron variant)",
    },
    ResourceOwner {
        resource: "aws.amazon.com/neuroncore",
        plugin: "the AWS Neuron device plugin",
        daemonsets: &["neuron-device-plugin"],
        namespace: "kube-system",
        install: "helm upgrade --install neuron-helm-chart oci://public.ecr.aws/neuron/neuron-helm-chart --namespace kube-system",
        note: "the Neuron driver must be on the AMI (the EKS-optimized accelerated AMI or the Bottlerocket Neuron variant)",
    },
    ResourceOwner {
        resource: "aws.amazon.com/neurondevice",
        plugin: "the AWS Neuron device plugin",
        daemonsets: &["neuron-device-plugin"],
        namespace: "kube-system",
        install: "helm upgrade --install neuron-helm-chart oci://public.ecr.aws/neuron/neuron-helm-chart --namespace kube-system",
        note: "the Neuron driver must be on the AMI",
    },
    ResourceOwner {
        resource: "vpc.amazonaws.com/efa",
        plugin: "the AWS EFA Kubernetes device plugin",
        daemonsets: &["aws-efa-k8s-device-plugin"],
        namespace: "kube-system",
        install: "helm upgrade --install aws-efa-k8s-device-plugin aws-efa-k8s-device-plugin --repo https://aws.github.io/eks-charts --namespace kube-system",
        note: "the instance type must support EFA and the launch must request EFA interfaces",
    },
    ResourceOwner {
        resource: "amd.com/gpu",
        plugin: "the AMD GPU device plugin",
        daemonsets: &["amdgpu-device-plugin"],
        namespace: "kube-system",
        install: "kubectl create -f https://raw.githubusercontent.com/ROCm/k8s-device-plugin/master/k8s-ds-amdgpu-dp.yaml",
        note: "the amdgpu driver must be on the AMI",
    },
    ResourceOwner {
        resource: "habana.ai/gaudi",
        plugin: "the Habana (Intel Gaudi) device plugin",
        daemonsets: &["habanalabs-device-plugin"],
        namespace: "habana-system",
        install: "kubectl apply -f <the Intel Gaudi device plugin manifest for your driver version>",
        note: "the Habana driver and container runtime must be on the AMI (DL1/DL2q instances)",
    },
    ResourceOwner {
        resource: "smarter-devices/",
        plugin: "the smarter-device-manager",
        daemonsets: &["smarter-device-manager"],
        namespace: "smarter-device-manager",
        install: "kubectl apply -f <the smarter-device-manager DaemonSet and its conf.yaml ConfigMap>",
        note: "its conf.yaml must list the device (devicematch) and the node must carry the label its DaemonSet selects",
    },
];

/// The plugin that registers `resource`.
pub fn resource_owner(resource: &str) -> Option<&'static ResourceOwner> {
    RESOURCE_OWNERS.iter().find(|o| {
        if o.resource.ends_with('/') {
            resource.starts_with(o.resource)
        } else {
            resource == o.resource
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_and_resources() {
        assert_eq!(
            taint_owner("node.cilium.io/agent-not-ready=true:NoExecute").map(|o| o.agent),
            Some("Cilium")
        );
        assert_eq!(
            taint_owner("ebs.csi.aws.com/agent-not-ready:NoExecute").map(|o| o.daemonsets[0]),
            Some("ebs-csi-node")
        );
        assert!(taint_owner("example.com/mine:NoSchedule").is_none());
        assert_eq!(taint_key("\"a/b=c:NoSchedule\""), "a/b");
        assert_eq!(
            resource_owner("smarter-devices/fuse").map(|o| o.daemonsets[0]),
            Some("smarter-device-manager")
        );
        assert!(resource_owner("nvidia.com/gpu").is_some());
        assert!(resource_owner("example.com/thing").is_none());
    }
}
