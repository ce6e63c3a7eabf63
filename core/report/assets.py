"""The HTML report's style sheet additions and its one small script (vanilla JavaScript,
no library, no network).

The script only adds to a page that is complete without it: it shows the filter form,
sorts the runs table by a clicked header (again: the other way), filters its rows by
search text, case, verdict, failure kind, tool and a metric threshold (the rows' ``data-*``
attributes, ``runs.runs_table``), opens the drill-down a link points at (and the
``details`` around it), and highlights an expected call together with the call paired with
it.
"""

from __future__ import annotations

CSS = """
body{max-width:1340px;padding:0 12px}
.filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:8px 0;padding:8px;background:#f6f7fa;border:1px solid #e3e6ee;border-radius:6px}
.filters label{font-size:.9em}.filters input[type=search]{width:16em}
table.runs-table{width:100%;table-layout:fixed}
table.runs-table td,table.runs-table th{overflow-wrap:anywhere}
table.runs-table th:nth-child(1){width:7%}table.runs-table th:nth-child(2){width:8%}
table.runs-table th:nth-child(3){width:4%}table.runs-table th:nth-child(4){width:7%}
table.runs-table th:nth-child(5){width:9%}table.runs-table th:nth-child(6){width:29%}
table.runs-table th:nth-child(n+7):nth-child(-n+11){width:6%}table.runs-table th:nth-child(12){width:6%}
table.runs-table td.num{overflow-wrap:normal}
th.sortable{cursor:pointer;user-select:none}th.sortable::after{content:" \\2195";color:#99a}
th[aria-sort=ascending]::after{content:" \\2191";color:#1d2430}th[aria-sort=descending]::after{content:" \\2193";color:#1d2430}
tr.run-row.v-fail td:first-child{border-left:4px solid #b42318}tr.run-row.v-gate td:first-child{border-left:4px solid #b54708}
tr.run-row.v-pass td:first-child{border-left:4px solid #17803d}tr.run-row{cursor:pointer}tr.run-row:hover td{background:#f6f8fc}
td.reason{font-size:.86em}
#case-grid td.cell{width:26px;text-align:center;padding:2px}#case-grid td.cell a{display:block;color:#fff;text-decoration:none;font-weight:700}
#case-grid td.cell.v-pass{background:#16a34a}#case-grid td.cell.v-fail{background:#dc2626}#case-grid td.cell.v-gate{background:#d97706}
#case-grid td.cell.empty{background:#f4f5f7}#case-grid td.cell.unlisted{background:#e5e7eb;color:#667}#case-grid th.case{font-weight:500;white-space:nowrap}
.tag{font-size:.75em;background:#fef0c7;color:#93370d;border-radius:3px;padding:0 4px}
.grid-wrap{max-height:640px;overflow:auto;display:inline-block;max-width:100%}
.run-detail{border:1px solid #e3e6ee;border-radius:6px;padding:4px 10px;margin:6px 0}
.run-detail>summary{padding:4px 0}.run-detail[open]{background:#fcfcfd}
.detail-body h4{margin:10px 0 4px}
table.calls{width:100%;table-layout:fixed}table.calls td{overflow-wrap:anywhere;font-size:.88em}
table.calls th:nth-child(2){width:18%}
.args{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;margin-top:2px}
mark.diff{background:#fde68a;padding:0 2px}.decide{margin-top:4px;color:#7a271a;font-size:.92em}
.st{font-weight:600}.st.matched,.st.optional{color:#17803d}.st.wrong,.st.missing,.st.wrong_args,.st.forbidden,.st.unnecessary,.st.duplicate,.st.parse_error{color:#b42318}
.st.retried{color:#b54708}
tr.pair.hl td,tr.hl td{background:#eef4ff}
.step.error{background:#fef3f2}.step{overflow-wrap:anywhere}
blockquote{margin:6px 0 0 0;padding:4px 8px;border-left:3px solid #b42318;background:#fff;color:#1d2430}
.card svg{max-width:100%;height:auto}
"""

JS = r"""
(function(){
'use strict';
var table=document.getElementById('runs');
var form=document.getElementById('run-filters');
function $(id){return document.getElementById(id);}
function openTarget(){
  var id=decodeURIComponent(location.hash.slice(1));if(!id)return;
  var el=document.getElementById(id);if(!el)return;
  for(var p=el;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}
  el.scrollIntoView({block:'start'});
}
window.addEventListener('hashchange',openTarget);
if(table&&form){
  form.hidden=false;
  var rows=Array.prototype.slice.call(table.tBodies[0].rows);
  var num=function(r,k){var v=r.getAttribute('data-'+k);return v===''||v===null?NaN:parseFloat(v);};
  var apply=function(){
    var q=$('f-search').value.trim().toLowerCase(),c=$('f-case').value,v=$('f-verdict').value,
        k=$('f-kind').value,t=$('f-tool').value,m=$('f-metric').value,op=$('f-op').value,
        x=parseFloat($('f-value').value),n=0;
    rows.forEach(function(r){
      var ok=(!c||r.getAttribute('data-case')===c)&&(!v||r.getAttribute('data-verdict')===v)&&
        (!k||r.getAttribute('data-kind')===k)&&
        (!t||(' '+r.getAttribute('data-tools')+' ').indexOf(' '+t+' ')>=0)&&
        (!q||r.textContent.toLowerCase().indexOf(q)>=0||(r.getAttribute('data-tools')||'').toLowerCase().indexOf(q)>=0);
      if(ok&&m&&!isNaN(x)){var y=num(r,m);ok=!isNaN(y)&&(op==='lt'?y<x:y>=x);}
      r.hidden=!ok;if(ok)n++;
    });
    $('f-count').textContent=n+' of '+rows.length+' runs';
  };
  ['f-search','f-value'].forEach(function(id){$(id).addEventListener('input',apply);});
  ['f-case','f-verdict','f-kind','f-tool','f-metric','f-op'].forEach(function(id){$(id).addEventListener('change',apply);});
  $('f-reset').addEventListener('click',function(){form.reset();apply();});
  var ths=table.tHead.rows[0].cells;
  Array.prototype.forEach.call(ths,function(th,i){
    th.tabIndex=0;
    var sort=function(){
      var asc=th.getAttribute('aria-sort')!=='ascending',isNum=th.getAttribute('data-type')==='num';
      Array.prototype.forEach.call(ths,function(o){o.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var key=function(r){var s=r.cells[i].textContent.trim();
        if(isNum){var f=parseFloat(s);return isNaN(f)?null:f;}return s.toLowerCase();};
      rows.sort(function(a,b){var x=key(a),y=key(b);
        if(x===y)return 0;if(x===null)return 1;if(y===null)return -1;
        return (x<y?-1:1)*(asc?1:-1);});
      var body=table.tBodies[0];rows.forEach(function(r){body.appendChild(r);});
    };
    th.addEventListener('click',sort);
    th.addEventListener('keydown',function(e){if(e.key==='Enter')sort();});
  });
  rows.forEach(function(r){r.addEventListener('click',function(e){
    if(e.target.tagName!=='A')location.hash='run-'+r.querySelector('a').getAttribute('href').slice(5);});});
}
Array.prototype.forEach.call(document.querySelectorAll('tr.pair'),function(tr){
  tr.addEventListener('mouseenter',function(){tr.classList.add('hl');});
  tr.addEventListener('mouseleave',function(){tr.classList.remove('hl');});
});
openTarget();
})();
"""

__all__ = ["CSS", "JS"]
