//! The report: what was asked about, the diagnoses, the 8-step checklist, the missing facts
//! (each with the command that collects it) and the input errors. Serialises to the JSON
//! schema of DESIGN.md (`schemaVersion` 1).

use serde::Serialize;

use crate::document::InputError;
use crate::facts::Facts;
use crate::rules::Diagnosis;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
    pub diagnoses: Vec<Diagnosis>,
    pub checklist: Vec<ChecklistStep>,
    pub missing: Vec<Missing>,
    pub input_errors: Vec<InputError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    Ok,
    Problem,
    NotCollected,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChecklistStep {
    pub step: u8,
    pub name: &'static str,
    pub status: StepStatus,
    pub signal: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub what: String,
    pub command: String,
}

impl Report {
    pub fn build(facts: &Facts, diagnoses: Vec<Diagnosis>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "karpenter-why",
                version: env!("CARGO_PKG_VERSION"),
            },
            subject: None,
            diagnoses,
            checklist: Vec::new(),
            missing: Vec::new(),
            input_errors: facts.input_errors.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serialises")
    }
}
