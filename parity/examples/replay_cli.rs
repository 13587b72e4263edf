//! Stand-alone front end of `parity replay` / `parity libm` (the same library entry points
//! that parity's main wires), plus `gen-crlog2`, which rewrites the generated tables of
//! fixtures/twin/include/crlog2.h from MPFR and a hard-case CSV.
use clap::{Parser, Subcommand};
use parity::replay::{crlog2gen, run_libm, run_replay, LibmArgs, ReplayArgs};
use std::path::PathBuf;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Replay(Box<ReplayArgs>),
    Libm(LibmArgs),
    /// Regenerate crlog2.h's tables (and write the hard-case CSV if --from-misrounded).
    GenCrlog2 {
        #[arg(long, default_value = "fixtures/twin/include/crlog2.h")]
        header: PathBuf,
        #[arg(long, default_value = "fixtures/data/log2_hard_cases.csv")]
        cases: PathBuf,
        /// Take the hard cases from a replay's misrounded.csv (input, expected columns).
        #[arg(long)]
        from_misrounded: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let code = match cli.cmd {
        Cmd::Replay(a) => run_replay(&a)?,
        Cmd::Libm(a) => run_libm(&a)?,
        Cmd::GenCrlog2 { header, cases, from_misrounded } => {
            if let Some(m) = from_misrounded {
                let list = crlog2gen::read_misrounded_csv(&m)?;
                std::fs::write(&cases, crlog2gen::cases_csv(&list))?;
            }
            let list = if cases.exists() { crlog2gen::read_cases_csv(&cases)? } else { vec![] };
            let text = std::fs::read_to_string(&header)?;
            std::fs::write(&header, crlog2gen::regenerate(&text, &list)?)?;
            println!("{}: {} hard cases", header.display(), list.len());
            0
        }
    };
    std::process::exit(code)
}
