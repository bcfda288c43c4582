fn main() -> std::process::ExitCode {
    latlab::cli::main()
}
