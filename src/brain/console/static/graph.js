// Knowledge Gateway console, Organisation graph: draws the graph whose data the page names
// (data-source) with Cytoscape, served beside this file. Progressive enhancement only: without
// it the list below the drawing holds the same nodes, each linking to its page.
(function () {
  'use strict';
  const holder = document.getElementById('graph-drawing');
  if (holder === null || typeof cytoscape !== 'function') return;
  const started = performance.now();
  /** Past this many nodes the drawing trades detail for speed while it pans and zooms. */
  const BIG = 300;
  // Cytoscape adds a <style> element for its container unless one with this id exists; the CSP
  // allows no inline style, so the same rule comes from a stylesheet of the gateway's own.
  if (document.getElementById('__________cytoscape_stylesheet') === null) {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.id = '__________cytoscape_stylesheet';
    link.href = holder.dataset.stylesheet;
    document.head.append(link);
  }
  // Set through the CSSOM (allowed by the CSP), so the drawing has its size before the stylesheet has loaded.
  holder.classList.add('drawing');
  holder.style.position = 'relative';
  holder.style.height = '70vh';
  holder.style.minHeight = '20rem';
  holder.dataset.state = 'loading';

  const PALETTE = ['#1f77b4', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22', '#393b79', '#637939', '#843c39'];
  const colours = new Map();
  const colourOf = (type) => {
    if (!colours.has(type)) colours.set(type, PALETTE[colours.size % PALETTE.length]);
    return colours.get(type);
  };

  function draw(data) {
    holder.dataset.fetchMs = String(Math.round(performance.now() - started));
    holder.textContent = '';
    const elements = [];
    for (const n of data.nodes) {
      const classes = [];
      if (n.mark !== null) classes.push(n.mark);
      if (n.gaps.length > 0) classes.push('gap');
      elements.push({ group: 'nodes', data: { id: n.id, label: n.title, url: n.url, colour: colourOf(n.type) }, classes });
    }
    data.relations.forEach((r, i) => {
      const classes = [];
      if (r.mark !== null) classes.push(r.mark);
      if (r.gap) classes.push('gap');
      elements.push({ group: 'edges', data: { id: `r${i}`, source: r.from, target: r.to, label: r.verb }, classes });
    });
    const big = data.nodes.length > BIG;
    const fitted = () => {
      // A small graph fitted to the frame would be drawn huge: at most a little above life size.
      if (cy.zoom() > 1.5) {
        cy.zoom(1.5);
        cy.center();
      }
    };
    const cy = cytoscape({
      container: holder,
      elements,
      // Layouts that place every node once: concentric by degree (hubs in the middle) for a small
      // graph, a grid past BIG; a force-directed layout (cose) takes many seconds at thousands of nodes.
      layout: big
        ? { name: 'grid', animate: false, avoidOverlap: false }
        : { name: 'concentric', concentric: (node) => node.degree(), levelWidth: () => 2, animate: false, minNodeSpacing: 60 },
      textureOnViewport: big,
      pixelRatio: big ? 1 : 'auto',
      hideEdgesOnViewport: big,
      minZoom: 0.02,
      maxZoom: 4,
      style: [
        {
          selector: 'node',
          style: {
            'background-color': 'data(colour)',
            label: 'data(label)',
            'font-size': 11,
            'min-zoomed-font-size': 7,
            'text-valign': 'bottom',
            'text-margin-y': 3,
            width: 18,
            height: 18,
            'border-width': 1,
            'border-color': '#333',
          },
        },
        { selector: 'node.inferred', style: { 'border-style': 'dashed', 'border-width': 3 } },
        { selector: 'node.unresolved', style: { 'border-style': 'dotted', 'border-width': 3 } },
        { selector: 'node.gap', style: { 'border-color': '#e8590c', 'border-width': 5 } },
        { selector: 'edge', style: { width: 1, 'line-color': '#9aa0a6', 'curve-style': 'haystack', opacity: 0.7 } },
        { selector: 'edge.inferred', style: { 'line-style': 'dashed', 'curve-style': 'straight' } },
        { selector: 'edge.unresolved', style: { 'line-style': 'dotted', 'curve-style': 'straight' } },
        { selector: 'edge.gap', style: { 'line-color': '#e8590c', width: 3, opacity: 1 } },
        { selector: 'node:selected', style: { 'border-color': '#000', 'border-width': 4 } },
      ],
    });
    fitted();
    holder.dataset.layoutMs = String(Math.round(performance.now() - started));
    cy.on('tap', 'node', (event) => window.location.assign(event.target.data('url')));
    holder.dataset.nodes = String(cy.nodes().length);
    holder.dataset.relations = String(cy.edges().length);
    // What tests and the responsiveness measure read: the instance, and the time to the first frame after drawing.
    holder.cy = cy;
    requestAnimationFrame(() => {
      holder.dataset.drawMs = String(Math.round(performance.now() - started));
      holder.dataset.state = 'drawn';
    });
  }

  fetch(holder.dataset.source, { credentials: 'same-origin', headers: { accept: 'application/json' } })
    .then((response) => {
      if (!response.ok) throw new Error(`the graph's data answered ${response.status}`);
      return response.json();
    })
    .then(draw)
    .catch(() => {
      holder.dataset.state = 'failed';
    });
})();
