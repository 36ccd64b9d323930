import nbformat
from nbformat.v4 import new_notebook, new_markdown_cell, new_code_cell
nb = new_notebook(cells=[
    new_markdown_cell("# Monthly sales\nWhich region grew fastest? The figures are in `sales.csv`."),
    new_code_cell("import pandas as pd\nimport matplotlib.pyplot as plt\nsales = pd.DataFrame({'region': ['north', 'south', 'east'], 'jan': [120, 95, 80], 'feb': [130, 90, 110]})\nprint('regions:', len(sales))\nsales"),
    new_code_cell("sales['growth'] = (sales.feb - sales.jan) / sales.jan\nfig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)\nax.bar(sales.region, sales.growth)\nplt.show()"),
    new_code_cell("import sys\nfor step in range(3):\n    print(f'\\rfitting {step + 1}/3', end='')\nprint()\nprint('warning: few points', file=sys.stderr)"),
    new_code_cell("sales['march']"),
], metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}})
nbformat.write(nb, "/tmp/nbreal/sales.ipynb")
