from uxbench.cli.main import main

main()
