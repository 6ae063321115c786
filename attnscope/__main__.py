from attnscope.cli import main

main()
