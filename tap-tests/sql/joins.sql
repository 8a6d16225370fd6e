-- joins: every join form over small tables with NULL keys, duplicate keys
-- and an empty table.
CREATE TABLE j_dept (dept_id int PRIMARY KEY, dname text, loc_id int);
CREATE TABLE j_emp (emp_id int PRIMARY KEY, ename text, dept_id int, manager_id int, salary int);
CREATE TABLE j_loc (loc_id int, city text);
CREATE TABLE j_proj (proj_id int, emp_id int, pname text);
CREATE TABLE j_none (dept_id int, x text);
INSERT INTO j_dept VALUES (10, 'sales', 1), (20, 'eng', 2), (30, 'ops', NULL), (40, 'empty', 1);
INSERT INTO j_emp VALUES
  (1, 'ann', 10, NULL, 5000),
  (2, 'bob', 20, 1, 4000),
  (3, 'cat', 20, 2, 4000),
  (4, 'dan', NULL, 1, 3000),
  (5, 'eve', 30, 2, NULL),
  (6, 'fay', 99, 5, 2500),
  (7, 'gus', 20, 2, 4500);
INSERT INTO j_loc VALUES (1, 'paris'), (2, 'oslo'), (2, 'oslo-annex'), (NULL, 'nowhere');
INSERT INTO j_proj VALUES (100, 2, 'db'), (101, 2, 'wal'), (102, 3, 'db'), (103, NULL, 'orphan'), (104, 7, 'db'), (104, 7, 'db');
-- @@ read-only
-- inner joins: ON, USING, NATURAL, comma with WHERE
SELECT e.ename, d.dname FROM j_emp e JOIN j_dept d ON e.dept_id = d.dept_id ORDER BY e.emp_id;
SELECT ename, dname, dept_id FROM j_emp INNER JOIN j_dept USING (dept_id) ORDER BY emp_id;
SELECT * FROM j_emp NATURAL JOIN j_dept ORDER BY emp_id;
SELECT e.ename, d.dname FROM j_emp e, j_dept d WHERE e.dept_id = d.dept_id AND e.salary > 4000 ORDER BY 1;
SELECT e.ename, d.dname FROM j_emp e JOIN j_dept d ON e.dept_id = d.dept_id AND d.dname <> 'eng' ORDER BY 1;
SELECT e.ename, d.dname FROM j_emp e JOIN j_dept d ON e.salary > 4000 AND d.dept_id < 20 ORDER BY 1, 2;
-- outer joins
SELECT e.ename, d.dname FROM j_emp e LEFT JOIN j_dept d ON e.dept_id = d.dept_id ORDER BY e.emp_id;
SELECT e.ename, d.dname FROM j_emp e RIGHT JOIN j_dept d ON e.dept_id = d.dept_id ORDER BY d.dept_id, e.emp_id;
SELECT e.ename, d.dname FROM j_emp e FULL JOIN j_dept d ON e.dept_id = d.dept_id ORDER BY e.emp_id NULLS LAST, d.dept_id;
SELECT dept_id, e.ename, d.dname FROM j_emp e FULL JOIN j_dept d USING (dept_id) ORDER BY dept_id NULLS FIRST, e.ename;
SELECT e.ename, d.dname FROM j_emp e LEFT JOIN j_dept d ON e.dept_id = d.dept_id WHERE d.dept_id IS NULL ORDER BY 1;
SELECT e.ename, d.dname FROM j_emp e LEFT JOIN j_dept d ON e.dept_id = d.dept_id AND d.dname = 'eng' ORDER BY e.emp_id;
SELECT d.dname, count(e.emp_id) AS n, sum(e.salary) FROM j_dept d LEFT JOIN j_emp e ON e.dept_id = d.dept_id GROUP BY d.dname ORDER BY d.dname;
SELECT d.dname, n.x FROM j_dept d LEFT JOIN j_none n ON n.dept_id = d.dept_id ORDER BY d.dept_id;
SELECT d.dname, n.x FROM j_dept d JOIN j_none n ON n.dept_id = d.dept_id;
SELECT d.dname, n.x FROM j_none n FULL JOIN j_dept d ON n.dept_id = d.dept_id ORDER BY d.dept_id;
-- cross join
SELECT d.dname, l.city FROM j_dept d CROSS JOIN j_loc l WHERE d.dept_id <= 20 ORDER BY 1, 2;
SELECT count(*) FROM j_emp, j_dept, j_loc;
-- self joins
SELECT e.ename, m.ename AS manager FROM j_emp e LEFT JOIN j_emp m ON e.manager_id = m.emp_id ORDER BY e.emp_id;
SELECT a.ename, b.ename FROM j_emp a JOIN j_emp b ON a.salary = b.salary AND a.emp_id < b.emp_id ORDER BY 1, 2;
-- three and four tables
SELECT e.ename, d.dname, l.city FROM j_emp e JOIN j_dept d ON e.dept_id = d.dept_id JOIN j_loc l ON l.loc_id = d.loc_id ORDER BY e.emp_id, l.city;
SELECT e.ename, d.dname, l.city FROM j_emp e LEFT JOIN j_dept d ON e.dept_id = d.dept_id LEFT JOIN j_loc l ON l.loc_id = d.loc_id ORDER BY e.emp_id, l.city;
SELECT e.ename, p.pname, d.dname, l.city FROM j_proj p JOIN j_emp e ON e.emp_id = p.emp_id JOIN j_dept d ON d.dept_id = e.dept_id LEFT JOIN j_loc l ON l.loc_id = d.loc_id ORDER BY p.proj_id, l.city;
SELECT e.ename, p.pname FROM j_emp e FULL JOIN j_proj p ON p.emp_id = e.emp_id ORDER BY e.emp_id NULLS LAST, p.proj_id;
SELECT d.dname, count(DISTINCT e.emp_id) AS emps, count(p.proj_id) AS projs FROM j_dept d LEFT JOIN j_emp e ON e.dept_id = d.dept_id LEFT JOIN j_proj p ON p.emp_id = e.emp_id GROUP BY d.dname ORDER BY d.dname;
SELECT e.ename, d.dname FROM j_emp e JOIN (j_dept d JOIN j_loc l ON l.loc_id = d.loc_id) ON d.dept_id = e.dept_id WHERE l.city = 'paris' ORDER BY 1;
-- semi and anti joins via EXISTS / NOT EXISTS
SELECT d.dname FROM j_dept d WHERE EXISTS (SELECT 1 FROM j_emp e WHERE e.dept_id = d.dept_id) ORDER BY 1;
SELECT d.dname FROM j_dept d WHERE NOT EXISTS (SELECT 1 FROM j_emp e WHERE e.dept_id = d.dept_id) ORDER BY 1;
SELECT e.ename FROM j_emp e WHERE NOT EXISTS (SELECT 1 FROM j_proj p WHERE p.emp_id = e.emp_id) ORDER BY 1;
-- join output with expressions and ORDER BY over both sides
SELECT e.ename || '@' || coalesce(d.dname, '?') AS who, e.salary + coalesce(d.loc_id, 0) AS s FROM j_emp e LEFT JOIN j_dept d ON d.dept_id = e.dept_id ORDER BY s DESC NULLS LAST, who;
SELECT e.*, d.* FROM j_emp e JOIN j_dept d ON d.dept_id = e.dept_id WHERE e.emp_id = 2;
SELECT DISTINCT l.city FROM j_loc l JOIN j_dept d ON d.loc_id = l.loc_id ORDER BY 1;
SELECT e.ename, d.dname FROM j_emp e JOIN j_dept d ON d.dept_id = e.dept_id ORDER BY e.salary DESC NULLS LAST, e.ename LIMIT 3;
-- errors
SELECT dept_id FROM j_emp JOIN j_dept ON j_emp.dept_id = j_dept.dept_id;
SELECT * FROM j_emp JOIN j_dept USING (nosuch);
