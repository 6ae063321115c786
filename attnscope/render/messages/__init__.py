"""The message catalogues, one module per language: ``en`` and ``ko`` (see ``attnscope.render.i18n``)."""
